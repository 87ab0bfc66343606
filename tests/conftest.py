"""Fixtures shared by every test: a fresh migrated database per test, on SQLite or
PostgreSQL (``LINEUP_TEST_DATABASE_URL``), a workspace factory, and the channels' real
local peers (an SMTP server, a Telegram Bot API server, a Slack)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hub.core.people.accounts import create_user
from hub.core.store.models import User, Workspace
from hub.testing import (
    HubProcess,
    TestDatabases,
    opened,
    temporary_directory,
    test_postgres_url,
)

if TYPE_CHECKING:
    from tests.channels.feishu_peer import FeishuPeer
    from tests.channels.peers import BotApiPeer, SmtpPeer
    from tests.channels.push_service import PushService
    from tests.channels.slack_peer import SlackPeer

# A new card goes out by email and Telegram at once in the tests (the hub holds it two
# seconds by default, in case it is answered where it was seen): waiting that long in each
# notification test would add minutes. ``tests/channels/test_card_hold.py`` runs the hold.
os.environ.setdefault("LINEUP_NOTIFY_AFTER_S", "0")
# Many tests sign several people up through the API as strangers would; the sign-up rule
# itself (``invite`` by default) is tested in ``tests/web/api/test_signup_rule.py``.
os.environ.setdefault("LINEUP_SIGNUP", "open")
# The allocator `lineup serve` starts itself again with (hub.cli), set for every hub process
# the tests start, so that none spends the second start; ``tests/test_cli.py`` runs it.
os.environ.setdefault("PYTHONMALLOC", "malloc")


def pytest_report_header() -> str:
    return f"database: {'postgres' if test_postgres_url() else 'sqlite'}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``same_on_every_database`` proves nothing more on PostgreSQL than on
    SQLite (it uses no database, or drives a CLI whose hub path other tests take on both),
    so it runs in the SQLite run only."""
    if not test_postgres_url():
        return
    once = pytest.mark.skip(reason="runs in the SQLite run: it is the same on every database")
    for item in items:
        if item.get_closest_marker("same_on_every_database"):
            item.add_marker(once)


# pytest-timeout's signal method fails a test once, by raising from SIGALRM, and that is
# not always the end: the exception can land in another asyncio task or callback, which
# keeps it, and a teardown after it (closing the loop, which joins its default executor)
# has no timer left. So a test still running this long after its timeout ends the run,
# with every thread's stack, as the thread method does, rather than hanging it.
GIVE_UP_AFTER_TIMEOUT_S = 60
_give_up = pytest.StashKey[threading.Timer]()


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> None:
    # Returns None, so pytest-timeout's own implementation still arms its timer.
    if settings.method != "signal":
        return  # the thread method ends the run by itself
    timer = threading.Timer(
        settings.timeout + GIVE_UP_AFTER_TIMEOUT_S, _end_the_run, (item, settings)
    )
    timer.daemon = True
    item.stash[_give_up] = timer
    timer.start()


def _end_the_run(item: pytest.Item, settings: Any) -> None:
    import pytest_timeout

    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    item.config.get_terminal_writer().line(
        f"\n{item.nodeid}: still running {GIVE_UP_AFTER_TIMEOUT_S}s after its "
        f"{settings.timeout}s timeout; ending the run"
    )
    pytest_timeout.timeout_timer(item, settings)  # prints every thread's stack, exits 1


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    timer = item.stash.get(_give_up, None)
    if timer is not None:
        timer.cancel()
        timer.join()


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that tries to reach beyond loopback."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        if isinstance(address, tuple) and self.family in (socket.AF_INET, socket.AF_INET6):
            host = str(address[0])
            if host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("127."):
                raise OSError(f"tests stay offline: refused connection to {host}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="session")
def test_databases() -> Iterator[TestDatabases]:
    with temporary_directory() as root:
        databases = TestDatabases(root, test_postgres_url())
        yield databases
        asyncio.run(databases.close())


@pytest.fixture
def is_postgres(test_databases: TestDatabases) -> bool:
    return test_databases.backend == "postgres"


@pytest.fixture
async def database_url(test_databases: TestDatabases) -> AsyncIterator[str]:
    """A fresh, migrated, empty database (not opened)."""
    url = await test_databases.create()
    yield url
    await test_databases.drop(url)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[str]:
    """The ORM opened on a fresh database for this test."""
    async with opened(database_url):
        yield database_url


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[HubProcess]:
    """``lineup serve`` on this test's database, stopped after it. Tests that need a hub
    with channels or settings of their own define their own ``hub``."""
    process = HubProcess(db, tmp_path / "hub")
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


@pytest.fixture
def make_user(db: str):  # type: ignore[no-untyped-def]
    counter = iter(range(1_000_000))

    async def make(name: str = "person") -> tuple[User, Workspace]:
        return await create_user(f"{name}{next(counter)}@example.com", "correct horse", name)

    return make


@pytest.fixture
async def workspace(make_user) -> Workspace:  # type: ignore[no-untyped-def]
    _, workspace = await make_user("owner")
    return workspace


@pytest.fixture
def tmp_data_dir(tmp_path: Path) -> Path:
    os.environ.setdefault("LINEUP_SECRET_KEY", "test-secret-key-" + "x" * 32)
    return tmp_path


@pytest.fixture
async def smtp() -> AsyncIterator[SmtpPeer]:
    """An SMTP server on loopback that keeps every message it receives."""
    from tests.channels.peers import SmtpPeer  # here: tests without peers never load Quart

    peer = SmtpPeer()
    peer.start()
    yield peer
    peer.stop()


@pytest.fixture
async def bot_api() -> AsyncIterator[BotApiPeer]:
    """A Telegram Bot API server on loopback, served by the test's event loop."""
    from tests.channels.peers import BotApiPeer

    peer = BotApiPeer()
    await peer.start()
    yield peer
    await peer.stop()


@pytest.fixture
async def feishu() -> AsyncIterator[FeishuPeer]:
    """A Feishu open platform on loopback, served by the test's event loop."""
    from tests.channels.feishu_peer import FeishuPeer

    peer = FeishuPeer()
    await peer.start()
    yield peer
    await peer.stop()


@pytest.fixture
async def slack() -> AsyncIterator[SlackPeer]:
    """A Slack (Web API and Socket Mode) on loopback, served by the test's event loop."""
    from tests.channels.slack_peer import SlackPeer

    peer = SlackPeer()
    await peer.start()
    yield peer
    await peer.stop()


@pytest.fixture
async def push_service() -> AsyncIterator[PushService]:
    """A Web Push service on loopback that verifies and decrypts every push."""
    from tests.channels.push_service import PushService

    service = PushService()
    await service.start()
    yield service
    await service.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.figures import summary

    terminalreporter.write_sep("=", f"reliability figures: {summary()}")


@pytest.fixture(autouse=True)
def _fresh_token_limits() -> Iterator[None]:
    """Failed bearer tokens are counted per address, and every test client is 127.0.0.1.
    Only once the web app is loaded: tests of the slim SDK never import it."""
    import sys

    identity = sys.modules.get("hub.host.identity")
    if identity is not None:
        identity.TOKEN_FAILURES.reset()
    yield
    identity = sys.modules.get("hub.host.identity")
    if identity is not None:
        identity.TOKEN_FAILURES.reset()
