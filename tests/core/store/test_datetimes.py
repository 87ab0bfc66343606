"""Moments read back from the store: on SQLite a datetime is text, parsed on every read of
every row, so the parser is the C one (ciso8601, a dependency of the server), and what it
reads is what was written, to the microsecond, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import ciso8601
import pytest
from tortoise import connections
from tortoise.fields import data

from hub.core.store.models import Workspace


@pytest.mark.same_on_every_database
def test_the_orm_parses_datetimes_with_ciso8601() -> None:
    # Tortoise falls back to the pure-Python iso8601 when ciso8601 is missing: a hundred
    # times slower, and silent. This says the dependency took effect.
    assert data.parse_datetime is ciso8601.parse_datetime


async def test_a_moment_reads_back_as_written_in_utc(db: str) -> None:
    written = [
        datetime(2026, 12, 6, 22, 41, 7, 123456, tzinfo=UTC),
        datetime(
            2026, 12, 6, 23, 41, 7, tzinfo=timezone(timedelta(hours=1))
        ),  # same as UTC 22:41:07
        datetime(2026, 1, 1, tzinfo=UTC),
    ]
    for n, moment in enumerate(written):
        await Workspace.create(id=f"ws_{n}", name="w", epoch="e", created_at=moment)
    read = {w.id: w.created_at for w in await Workspace.all()}
    for n, moment in enumerate(written):
        assert read[f"ws_{n}"] == moment
        assert read[f"ws_{n}"].utcoffset() == timedelta(0)


async def test_text_written_by_sql_alone_reads_as_utc(db: str, is_postgres: bool) -> None:
    """A row written outside the ORM (a migration's SQL, an operator's fix) holds the
    database's own text for a moment: without a zone it is UTC."""
    if is_postgres:
        sql = "INSERT INTO workspace (id, name, epoch, created_at) VALUES ($1, 'w', 'e', $2)"
        moment: object = datetime(2026, 12, 6, 22, 41, 7, tzinfo=UTC)
    else:
        sql = "INSERT INTO workspace (id, name, epoch, created_at) VALUES (?, 'w', 'e', ?)"
        moment = "2026-12-06 22:41:07"  # SQLite's CURRENT_TIMESTAMP form
    await connections.get("default").execute_query(sql, ["ws_sql", moment])
    (row,) = await Workspace.filter(id="ws_sql")
    assert row.created_at == datetime(2026, 12, 6, 22, 41, 7, tzinfo=UTC)
