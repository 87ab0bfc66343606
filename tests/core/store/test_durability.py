"""An acknowledged commit is on disk: SQLite syncs its write-ahead log at every commit, and
PostgreSQL sessions wait for the flush.

With ``synchronous=NORMAL`` a power cut can take the last commits away, and the workspace's
``last_sequence`` with them, so the hub would hand out again sequences its clients have
seen. Each setting is read back through the hub's own connection, the one appends use.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import asyncpg
import pytest
from tortoise import connections

from hub.core.store.database import normalise_url
from hub.testing import opened

# PRAGMA synchronous answers with a number: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
FULL = 2


async def test_the_hubs_sqlite_connection_syncs_every_commit(db: str, is_postgres: bool) -> None:
    if is_postgres:
        pytest.skip("a SQLite pragma")
    rows = await connections.get("default").execute_query_dict("PRAGMA synchronous")
    assert rows[0]["synchronous"] == FULL
    rows = await connections.get("default").execute_query_dict("PRAGMA journal_mode")
    assert rows[0]["journal_mode"] == "wal"


def test_a_url_that_sets_its_own_synchronous_keeps_it() -> None:
    # An operator who chooses NORMAL on purpose (and accepts losing the last commits to a
    # power cut) says so in the URL; the hub's default does not override it.
    url = normalise_url("sqlite:///tmp/hub.sqlite3?synchronous=NORMAL")
    assert "synchronous=NORMAL" in url and "synchronous=FULL" not in url
    assert "synchronous=FULL" in normalise_url("sqlite:///tmp/hub.sqlite3")


@pytest.mark.parametrize(("chosen", "used"), [("off", "on"), ("local", "local")])
async def test_the_hubs_postgres_sessions_never_acknowledge_unflushed_commits(
    database_url: str, is_postgres: bool, chosen: str, used: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A database whose default is synchronous_commit=off would acknowledge commits a crash
    # can take back: the hub's sessions turn it on, and say so. Any value that flushes
    # locally is the operator's to choose.
    if not is_postgres:
        pytest.skip("a PostgreSQL setting")
    url = database_url.replace("postgres://", "postgresql://", 1)
    admin = await asyncpg.connect(url)
    try:
        name = urlsplit(url).path.lstrip("/")
        await admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = {chosen}')
    finally:
        await admin.close()
    with caplog.at_level(logging.WARNING, logger="hub.core.store.database"):
        async with opened(database_url):
            rows = await connections.get("default").execute_query_dict("SHOW synchronous_commit")
    assert rows[0]["synchronous_commit"] == used
    warned = [r for r in caplog.records if "synchronous_commit=off" in r.getMessage()]
    assert len(warned) == (1 if chosen == "off" else 0)
