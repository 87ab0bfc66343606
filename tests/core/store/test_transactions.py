"""A task cancelled at any point of a transaction leaves the database usable.

Agent sockets die mid-append all the time; on SQLite a cancellation between taking the
connection's lock and sending BEGIN used to leave the lock held and hang every later query.
"""

from __future__ import annotations

import asyncio
import contextlib

from hub.core.log.events import append_event, last_sequence
from hub.core.store.models import Event, Workspace
from hub.core.store.transactions import in_transaction


async def test_cancelling_transactions_anywhere_never_hangs(workspace: Workspace) -> None:
    appended = 0
    for attempt in range(60):
        task = asyncio.create_task(
            append_event(workspace.id, "note.added", {"n": attempt}, actor="system")
        )
        for _ in range(attempt % 12):  # cancel after 0..11 turns of the loop
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
            appended += 1
        except asyncio.CancelledError:
            pass
        # The next transaction must get through: no lock left behind.
        async with asyncio.timeout(10):
            async with in_transaction() as connection:
                await connection.execute_query("SELECT 1")
    async with asyncio.timeout(10):
        result = await append_event(workspace.id, "note.added", {}, actor="system")
    # Every append either happened whole or not at all, and sequences have no gap. An
    # append cancelled while its COMMIT was on the wire may have happened although its
    # caller saw the cancellation, so the log is counted, not the appends that returned.
    stored = await Event.filter(workspace_id=workspace.id).order_by("sequence")
    assert [e.sequence for e in stored] == list(range(1, len(stored) + 1))
    assert appended + 1 <= len(stored) == result.sequence == await last_sequence(workspace.id)


async def test_an_error_inside_rolls_back(workspace: Workspace) -> None:
    try:
        async with in_transaction():
            await Workspace.filter(id=workspace.id).update(name="changed")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert (await Workspace.get(id=workspace.id)).name != "changed"


async def test_cancelling_while_a_transaction_opens_leaks_no_connection(
    workspace: Workspace,
) -> None:
    """On PostgreSQL each leak would keep a pooled connection; a few exhaust the pool."""

    async def read_in_transaction() -> None:
        async with in_transaction():
            await Workspace.all().count()

    for attempt in range(100):
        task = asyncio.create_task(read_in_transaction())
        for _ in range(attempt % 9):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        async with asyncio.timeout(10):
            await read_in_transaction()
