"""The SQL a block of code sends, on every connection of the hub's database.

On SQLite reads go to a connection of their own (``hub.core.store.sqlite_reader``), so
counting the writer's queries alone would miss them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tortoise import connections


@dataclass(frozen=True)
class Statement:
    """One query as sent: its SQL and the values bound to its parameters."""

    sql: str
    values: Any


def record_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query sent from now on (``execute_query``), in order, on every connection."""
    queries: list[str] = []
    _record(monkeypatch, lambda sql, _values: queries.append(sql))
    return queries


def record_statements(monkeypatch: pytest.MonkeyPatch) -> list[Statement]:
    """As ``record_queries``, with each query's values, so that it can be sent again (to
    ask the database how it would run it)."""
    statements: list[Statement] = []
    _record(monkeypatch, lambda sql, values: statements.append(Statement(sql, values)))
    return statements


def _record(monkeypatch: pytest.MonkeyPatch, keep: Any) -> None:
    for name in connections.db_config:
        client = connections.get(name)
        real = client.execute_query

        async def counted(query: str, values: Any = None, *, _real: Any = real) -> Any:
            keep(query, values)
            return await _real(query, values)

        monkeypatch.setattr(client, "execute_query", counted)
