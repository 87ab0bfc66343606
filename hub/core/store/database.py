"""Opening the database: the Tortoise config, migrations on start, and closing.

One backend per process (SQLite or PostgreSQL), chosen by the URL. Migrations are
Tortoise's own (``hub/core/store/migrations``); they run before the ORM is initialised for
serving, under a lock so that two hub processes starting together do not both migrate.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import importlib
import logging
import pkgutil
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
from tortoise import Tortoise
from tortoise.backends.base.client import TransactionContextPooled
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.backends.sqlite.client import SqliteTransactionContext
from tortoise.connection import get_connections
from tortoise.context import TortoiseContext
from tortoise.migrations.api import migrate as run_migrations
from tortoise.migrations.recorder import MigrationRecorder

from hub.core.store.sqlite_reader import READER, ReadsBesideTheWriter, reader_url
from hub.core.store.statistics import gather_statistics

logger = logging.getLogger(__name__)

MODELS_MODULE = "hub.core.store.models"
# Notification and outside-surface state: entities of their own, kept apart from the log's.
NOTIFICATION_MODELS_MODULE = "hub.core.store.notification_models"
# Remote (A2A) agents' cards, sealed keys and call ledger.
REMOTE_MODELS_MODULE = "hub.core.store.remote_models"
# Workspace approval-policy rules.
POLICY_MODELS_MODULE = "hub.core.store.policy_models"
MIGRATIONS_MODULE = "hub.core.store.migrations"

# WAL lets readers run beside the writer; a busy timeout turns "database is locked" into a
# short wait when a second process (the CLI, another hub) writes at the same moment.
# synchronous=FULL syncs the WAL at every commit, so an acknowledged event survives a power
# cut or an OS crash. NORMAL syncs only at checkpoints: cheaper, but the last commits can
# vanish, and the workspace's last_sequence rolls back with them under the same epoch, so
# the hub would hand out again sequence numbers its clients have already seen.
SQLITE_PRAGMAS = {"journal_mode": "WAL", "synchronous": "FULL", "busy_timeout": "10000"}


def normalise_url(url: str) -> str:
    """Add the SQLite pragmas we rely on unless the URL sets them itself."""
    if not url.startswith("sqlite://") or url == "sqlite://:memory:":
        return url
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    for key, value in SQLITE_PRAGMAS.items():
        query.setdefault(key, value)
    return urlunsplit(parts._replace(query=urlencode(query)))


class _PooledConnection(asyncpg.Connection):  # type: ignore[misc]
    """A PostgreSQL connection given back to the pool without a reset query.

    asyncpg resets every connection it takes back (``UNLISTEN *``, ``RESET ALL``, closing
    cursors, releasing advisory locks): one more round trip per query made outside a
    transaction, and per transaction. The hub leaves none of that behind on pooled
    connections (it listens and takes its migration lock on connections of their own), so
    the reset is only the part asyncpg always does: ending a transaction left open.
    """

    def get_reset_query(self) -> str:
        return ""


def _connection(database_url: str) -> str | dict[str, Any]:
    url = normalise_url(database_url)
    if not url.startswith(("postgres://", "postgresql://")):
        return url
    config = expand_db_url(url)
    credentials = config["credentials"]
    credentials["connection_class"] = _PooledConnection
    # asyncpg prepares every statement, and after five runs PostgreSQL may keep one generic
    # plan for good. A plan made while a table was small (the log at start) reads it whole:
    # a seq scan that costs nothing at 100 events and 140 ms a batch at 30,000. Planning
    # each run anew costs a fraction of a millisecond and follows the table as it grows.
    settings = dict(credentials.get("server_settings") or {})
    settings.setdefault("plan_cache_mode", "force_custom_plan")
    credentials["server_settings"] = settings
    return config


def tortoise_config(database_url: str, *, durable_commits: bool = False) -> dict[str, Any]:
    """The Tortoise config for ``database_url``; ``durable_commits`` makes every PostgreSQL
    session of the hub wait for its commit to be flushed (see ``open_database``)."""
    connection = _connection(database_url)
    if durable_commits and isinstance(connection, dict):
        connection["credentials"]["server_settings"]["synchronous_commit"] = "on"
    return {
        "connections": {"default": connection},
        "apps": {
            "models": {
                "models": [
                    MODELS_MODULE,
                    NOTIFICATION_MODELS_MODULE,
                    REMOTE_MODELS_MODULE,
                    POLICY_MODELS_MODULE,
                ],
                "migrations": MIGRATIONS_MODULE,
                "default_connection": "default",
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def sqlite_path(database_url: str) -> Path | None:
    if not database_url.startswith("sqlite://") or database_url == "sqlite://:memory:":
        return None
    return Path(urlsplit(database_url).path)


async def migrate(database_url: str, target: str | None = None) -> None:
    """Bring the schema up to date (or to ``target``, e.g. ``models.0001_initial``)."""
    path = sqlite_path(database_url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    with _migration_lock(database_url):
        async with TortoiseContext():
            config = tortoise_config(database_url)
            if not database_url.startswith("sqlite://"):
                await _migrate_under_advisory_lock(database_url, config, target)
            else:
                await run_migrations(config=config, target=target)


async def _migrate_under_advisory_lock(
    database_url: str, config: dict[str, Any], target: str | None
) -> None:
    # A session-level advisory lock on its own connection: held while the migration runs
    # on Tortoise's connections, released when this connection closes.
    url = database_url.replace("postgres://", "postgresql://", 1)
    url = urlunsplit(urlsplit(url)._replace(query=""))
    lock_conn = await asyncpg.connect(url)
    try:
        await lock_conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK_KEY)
        await run_migrations(config=config, target=target)
    finally:
        await lock_conn.close()


_MIGRATION_LOCK_KEY = int.from_bytes(hashlib.sha256(b"lineup-migrate").digest()[:7], "big")


@contextlib.contextmanager
def _migration_lock(database_url: str) -> Iterator[None]:
    path = sqlite_path(database_url)
    if path is None:
        yield
        return
    with open(path.with_name(path.name + ".migrate-lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


async def pending_migrations() -> list[str]:
    """The migrations shipped with this version that the open database has not applied."""
    shipped = {
        module.name
        for module in pkgutil.iter_modules(importlib.import_module(MIGRATIONS_MODULE).__path__)
    }
    applied = await MigrationRecorder(get_connections().get("default")).applied_migrations()
    return sorted(shipped - {key.name for key in applied if key.app_label == "models"})


async def open_database(database_url: str, *, apply_migrations: bool = True) -> None:
    if apply_migrations:
        await migrate(database_url)
    config = tortoise_config(database_url, durable_commits=await _commits_may_be_lost(database_url))
    on_sqlite = sqlite_path(database_url) is not None
    if on_sqlite:  # reads beside the writer (sqlite_reader)
        config["connections"][READER] = reader_url(normalise_url(database_url))
        config["routers"] = [ReadsBesideTheWriter]
    # The global fallback lets request tasks, started outside the context that ran init,
    # see the connections (Quart runs before_serving in another task).
    await Tortoise.init(config=config, _enable_global_fallback=True)
    if on_sqlite:
        await gather_statistics()


async def _commits_may_be_lost(database_url: str) -> bool:
    """Whether the PostgreSQL server acknowledges commits before flushing them.

    With ``synchronous_commit=off`` (the server's or the database's default) a crash takes
    back the last commits, and the log its last sequences, which clients have already seen.
    The hub then sets it on for its own sessions. Any other value flushes locally at least,
    and is left as the operator chose it (``remote_apply`` waits for more, not less).
    """
    if not database_url.startswith(("postgres://", "postgresql://")):
        return False
    url = database_url.replace("postgres://", "postgresql://", 1)
    connection = await asyncpg.connect(urlunsplit(urlsplit(url)._replace(query="")))
    try:
        setting: str = await connection.fetchval("SHOW synchronous_commit")
    finally:
        await connection.close()
    off = setting == "off"
    if off:
        logger.warning(
            "PostgreSQL runs with synchronous_commit=off, which acknowledges commits a crash "
            "can take back; the hub's own sessions use synchronous_commit=on"
        )
    return off


async def close_database() -> None:
    await Tortoise.close_connections()


@contextlib.asynccontextmanager
async def database(database_url: str) -> AsyncIterator[None]:
    """Open (migrating first) and close the database around a block: CLI commands, tests."""
    await open_database(database_url)
    try:
        yield
    finally:
        await close_database()


# A transaction takes the write lock as it begins, waiting (busy_timeout) while another
# process holds it. A deferred BEGIN takes it at the first write instead, and if another
# connection committed since the transaction's first read, SQLite refuses at once
# ("database is locked", no wait): two processes on one file (the CLI, a second hub)
# would fail each other's writes at random.
_BEGIN_SQLITE = "BEGIN IMMEDIATE"


async def _enter_sqlite_transaction(self: Any) -> Any:
    """Tortoise's ``SqliteTransactionContext.__aenter__``, safe against cancellation.

    Tortoise takes the connection's lock, then awaits the connection and BEGIN; a task
    cancelled in between never reaches ``__aexit__``, so the lock stays held and every later
    query of the process waits forever. Agent sockets die mid-append all the time, so here
    whatever was taken is given back before the cancellation goes on. (A BEGIN that still
    reaches SQLite is harmless: the next transaction ends the empty one before its own.)

    Tortoise's own ``begin`` sends a COMMIT before every BEGIN, for such a leftover: a
    round trip to the connection's thread, a tenth of a lone event's latency. Here the
    COMMIT is sent only when BEGIN meets a leftover. (Asking ``in_transaction`` first would
    not do: the leftover BEGIN may still be queued for the connection's thread.)
    """
    await self._trxlock.acquire()
    token = None
    try:
        await self.ensure_connection()
        token = get_connections().set(self.connection_name, self.connection)
        sqlite = self.connection._connection  # the aiosqlite connection, autocommit mode
        try:
            await sqlite.execute(_BEGIN_SQLITE)
        except sqlite3.OperationalError:
            if not sqlite.in_transaction:
                raise
            await sqlite.commit()
            await sqlite.execute(_BEGIN_SQLITE)
    except BaseException:
        if token is not None:
            get_connections().reset(token)
        self._trxlock.release()
        raise
    self.token = token
    return self.connection


async def _enter_pooled_transaction(self: Any) -> Any:
    """The same for PostgreSQL: Tortoise takes a pooled connection, then awaits BEGIN; a
    task cancelled in between never returns the connection, and a few such leaks exhaust
    the pool. Here it goes back to the pool (asyncpg resets it) before the cancellation
    goes on; the release is shielded so a second cancellation cannot interrupt it."""
    await self.ensure_connection()
    pool = self.client._parent._pool
    self.client._connection = await pool.acquire()
    token = None
    try:
        token = get_connections().set(self.connection_name, self.client)
        await self.client.begin()
    except BaseException:
        if token is not None:
            get_connections().reset(token)
        await asyncio.shield(pool.release(self.client._connection))
        raise
    self.token = token
    return self.client


SqliteTransactionContext.__aenter__ = _enter_sqlite_transaction  # type: ignore[method-assign]
TransactionContextPooled.__aenter__ = _enter_pooled_transaction  # type: ignore[method-assign]
