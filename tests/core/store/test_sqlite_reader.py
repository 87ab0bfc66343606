"""On SQLite, reads outside a transaction do not wait for the writer's transaction.

A person's request reads half a dozen rows; before the reader, each waited for the write
batch in progress, which under agents' bulk traffic is always there.
"""

from __future__ import annotations

import asyncio

import pytest
from tortoise import connections
from tortoise.exceptions import OperationalError

from hub.core.store.models import Workspace
from hub.core.store.sqlite_reader import READER
from hub.core.store.transactions import in_transaction


@pytest.fixture(autouse=True)
def _sqlite_only(is_postgres: bool) -> None:
    if is_postgres:
        pytest.skip("PostgreSQL reads from its pool beside any transaction")


async def test_a_read_does_not_wait_for_an_open_write_transaction(workspace: Workspace) -> None:
    writing, done = asyncio.Event(), asyncio.Event()

    async def slow_writer() -> None:
        async with in_transaction():
            await Workspace.filter(id=workspace.id).update(name="Renamed")
            # Inside the transaction its own write is what it reads.
            assert (await Workspace.get(id=workspace.id)).name == "Renamed"
            writing.set()
            await done.wait()

    writer = asyncio.create_task(slow_writer())
    await writing.wait()
    try:
        async with asyncio.timeout(5):  # before the reader, this waited for the commit
            seen = await Workspace.get(id=workspace.id)
        assert seen.name == workspace.name  # the committed state, not the write in progress
    finally:
        done.set()
        await writer
    assert (await Workspace.get(id=workspace.id)).name == "Renamed"


async def test_the_reader_cannot_write(workspace: Workspace) -> None:
    with pytest.raises(OperationalError, match="readonly"):
        await connections.get(READER).execute_query(
            "UPDATE workspace SET name = 'x' WHERE id = ?", [workspace.id]
        )
