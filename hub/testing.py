"""Test helpers for the hub's own tests and for plugin authors.

* ``TestDatabases`` hands each test a fresh, fully migrated database: a copy of a template
  file on SQLite, ``CREATE DATABASE … TEMPLATE`` on PostgreSQL. Migrating once and copying
  keeps a test's setup in milliseconds while still exercising the real migrations.
* ``HubProcess`` runs ``lineup serve`` as its own process on a free loopback port, for
  end-to-end tests over real sockets, and always stops it.

Which database a run uses comes from ``LINEUP_TEST_DATABASE_URL`` (a PostgreSQL server URL
whose user may create databases); unset, SQLite. Tortoise keeps one backend per process,
so the two databases are tested by two pytest processes (``make test`` does both).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ulid import ULID

from hub.core.store.database import close_database, migrate, open_database

POSTGRES_URL_VARIABLE = "LINEUP_TEST_DATABASE_URL"


def test_postgres_url() -> str | None:
    return os.environ.get(POSTGRES_URL_VARIABLE) or None


async def eventually(check: Any, within: float = 30.0, every: float = 0.02) -> Any:
    """Wait until ``check()`` (sync or async) returns something truthy, and return it; fail
    after ``within`` seconds. Tests wait on conditions this way, never on a fixed sleep."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the condition did not come true in {within}s")
        await asyncio.sleep(every)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TestDatabases:
    """Fresh migrated databases, one per test, from a template migrated once."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, root: Path, postgres_url: str | None = None) -> None:
        self.root = root
        self.postgres_url = postgres_url
        self._template: str | None = None

    @property
    def backend(self) -> str:
        return "postgres" if self.postgres_url else "sqlite"

    async def _template_ready(self) -> str:
        if self._template is None:
            if self.postgres_url:
                name = f"lineup_template_{ULID().hex[:12]}"
                await self._admin(f'CREATE DATABASE "{name}"')
                await migrate(self._pg_url(name))
                self._template = name
            else:
                path = self.root / "template.sqlite3"
                await migrate(f"sqlite://{path}")
                self._template = str(path)
        return self._template

    async def create(self) -> str:
        """A new database URL with the schema applied and nothing in it."""
        template = await self._template_ready()
        if self.postgres_url:
            name = f"lineup_test_{ULID().hex[:16]}"
            await self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            return self._pg_url(name)
        path = self.root / f"{ULID().hex}.sqlite3"
        shutil.copyfile(template, path)
        return f"sqlite://{path}"

    async def drop(self, url: str) -> None:
        if self.postgres_url:
            name = urlsplit(url).path.lstrip("/")
            await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(urlsplit(url).path + suffix).unlink(missing_ok=True)

    async def close(self) -> None:
        if self.postgres_url and self._template:
            await self._admin(f'DROP DATABASE IF EXISTS "{self._template}" WITH (FORCE)')

    def _pg_url(self, name: str) -> str:
        assert self.postgres_url
        parts = urlsplit(self.postgres_url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    async def _admin(self, statement: str) -> None:
        import asyncpg

        assert self.postgres_url
        url = urlunsplit(urlsplit(self.postgres_url)._replace(path="/postgres", query=""))
        connection = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1))
        try:
            await connection.execute(statement)
        finally:
            await connection.close()


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[str]:
    """The ORM opened on ``url`` (already migrated) for the block."""
    await open_database(url, apply_migrations=False)
    try:
        yield url
    finally:
        await close_database()


class HubProcess:
    """``lineup serve`` in a subprocess on a free loopback port."""

    def __init__(self, database_url: str, data_dir: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.env = {
            **os.environ,
            "LINEUP_HOST": "127.0.0.1",
            "LINEUP_PORT": str(self.port),
            "LINEUP_DATABASE_URL": database_url,
            "LINEUP_DATA_DIR": str(data_dir),
            "LINEUP_SECRET_KEY": "test-secret-key-" + "x" * 32,
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / f"hub-{self.port}.log"

    def start(self, timeout: float = 30.0) -> HubProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps writing to it
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hub.cli", "serve"],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub exited at start:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the hub did not answer /healthz in {timeout}s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout)

    def kill(self) -> None:
        """``kill -9``: no shutdown code runs."""
        self.stop(signal.SIGKILL)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> HubProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def temporary_directory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="lineup-test-") as name:
        yield Path(name)


def run(coroutine: object) -> object:
    """Run a coroutine to completion from synchronous code (session fixtures)."""
    return asyncio.run(coroutine)  # type: ignore[arg-type]
