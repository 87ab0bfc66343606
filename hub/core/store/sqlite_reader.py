"""On SQLite, reads on a connection of their own, beside the writer's.

Tortoise keeps one SQLite connection and one lock for it, and a transaction holds the lock
until it commits: every read of the hub, a page a person opens, a card they answer, waits
for the write batch in progress. While agents stream, that batch rarely ends, and a
person's request (half a dozen reads and one write) waited behind several of them. WAL mode
lets readers run beside the one writer, given a connection of their own: ``READER`` opens
one more on the same file, ``query_only`` so it can never write, and ``ReadsBesideTheWriter``
sends Tortoise's reads there.

Only reads outside a transaction: inside one (the projection's handlers, a check before an
update) a read must see the transaction's own writes, so it stays on the transaction's
connection. A read on ``READER`` sees what was committed when it started, as a read that
waited for the commit would, and never a write still in progress. PostgreSQL has a pool
and needs none of this.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient
from tortoise.connection import get_connections

READER = "sqlite_reader"
WRITER = "default"


def reader_url(sqlite_url: str) -> str:
    """The reader's URL: the same file and pragmas, read-only."""
    parts = urlsplit(sqlite_url)
    query = dict(parse_qsl(parts.query))
    query["query_only"] = "ON"
    return urlunsplit(parts._replace(query=urlencode(query)))


class ReadsBesideTheWriter:
    """A Tortoise router: reads outside a transaction go to ``READER``."""

    def db_for_read(self, model: Any) -> str | None:
        if isinstance(get_connections().get(WRITER), TransactionalDBClient):
            return None  # inside a transaction: read what it wrote
        return READER

    def db_for_write(self, model: Any) -> str | None:
        return None


def reading_connection() -> BaseDBAsyncClient:
    """Where a read written in SQL goes, as the router sends the ORM's: the reader outside a
    transaction when there is one, else the writer (PostgreSQL, or inside a transaction)."""
    connections = get_connections()
    writer = connections.get(WRITER)
    if READER in connections.db_config and not isinstance(writer, TransactionalDBClient):
        return connections.get(READER)
    return writer


__all__ = ["READER", "WRITER", "ReadsBesideTheWriter", "reader_url", "reading_connection"]
