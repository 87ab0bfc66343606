"""An acknowledged commit is on disk: SQLite syncs its write-ahead log at every commit.

With ``synchronous=NORMAL`` a power cut can take the last commits away, and the workspace's
``last_sequence`` with them, so the hub would hand out again sequences its clients have
seen. The pragma is read back through the hub's own connection, the one appends use.
"""

from __future__ import annotations

import pytest
from tortoise import connections

from hub.core.store.database import normalise_url

# PRAGMA synchronous answers with a number: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
FULL = 2


async def test_the_hubs_sqlite_connection_syncs_every_commit(db: str, is_postgres: bool) -> None:
    if is_postgres:
        pytest.skip("a SQLite pragma; PostgreSQL flushes its WAL at commit by default")
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
