"""The SQL a block of code sends, on every connection of the hub's database.

On SQLite reads go to a connection of their own (``hub.core.store.sqlite_reader``), so
counting the writer's queries alone would miss them.
"""

from __future__ import annotations

from typing import Any

import pytest
from tortoise import connections


def record_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query sent from now on (``execute_query``), in order, on every connection."""
    queries: list[str] = []
    for name in connections.db_config:
        client = connections.get(name)
        real = client.execute_query

        async def counted(query: str, values: Any = None, *, _real: Any = real) -> Any:
            queries.append(query)
            return await _real(query, values)

        monkeypatch.setattr(client, "execute_query", counted)
    return queries
