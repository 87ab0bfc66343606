"""Transactions on the hub's database: ``in_transaction()``, on the writer's connection.

Tortoise's own ``in_transaction()`` picks the connection only while there is one; on SQLite
the hub also opens a reader beside the writer (``hub.core.store.sqlite_reader``), so every
transaction names the writer here, and nothing else in the hub imports Tortoise's
(``tests/test_architecture.py`` keeps it so).
"""

from __future__ import annotations

from tortoise.backends.base.client import TransactionContext
from tortoise.transactions import in_transaction as _tortoise_in_transaction

from hub.core.store.sqlite_reader import WRITER


def in_transaction() -> TransactionContext:
    """One transaction on the writer's connection: ``async with in_transaction() as c:``."""
    return _tortoise_in_transaction(WRITER)


__all__ = ["in_transaction"]
