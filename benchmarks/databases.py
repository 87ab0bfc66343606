"""A figure measured on a database of its own: SQLite, or PostgreSQL when
``LINEUP_TEST_DATABASE_URL`` names a server, made for the run and dropped after it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from hub.testing import TestDatabases, temporary_directory, test_postgres_url

T = TypeVar("T")


async def on_a_fresh_database(measure: Callable[[str, Path], Awaitable[T]]) -> T:
    """``measure(database_url, scratch_folder)``, with both gone afterwards."""
    with temporary_directory() as root:
        databases = TestDatabases(root, postgres_url=test_postgres_url())
        url = await databases.create()
        try:
            return await measure(url, root)
        finally:
            await databases.drop(url)
            await databases.close()
