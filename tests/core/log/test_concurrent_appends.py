"""Many writers into one workspace: gap-free sequences, and a reader that never skips one.

This is the reason the sequence is allocated under the workspace's row lock: with a global
serial column, sequence N+1 could commit before N and a reader polling "after N+1" would
never see N.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from hub.core.log.events import append_event, events_after
from hub.core.store.models import Workspace
from hub.testing import opened

WRITERS, EVENTS_PER_WRITER = 20, 200


@pytest.fixture
async def pooled_db(database_url: str) -> AsyncIterator[str]:
    """The database with a pool big enough for every writer to hold its own connection."""
    url = database_url
    if url.startswith("postgres"):
        url += ("&" if "?" in url else "?") + f"minsize=1&maxsize={WRITERS + 5}"
    async with opened(url):
        yield url


async def test_concurrent_writers_and_a_polling_reader(pooled_db: str) -> None:
    from hub.core.people.accounts import create_user

    _, workspace = await create_user("writer@example.com", "correct horse")
    total = WRITERS * EVENTS_PER_WRITER
    writing = True
    seen: list[int] = []

    async def writer(number: int) -> None:
        for n in range(EVENTS_PER_WRITER):
            await append_event(workspace.id, "note.added", {"w": number, "n": n}, actor="system")

    async def reader() -> None:
        after = 0
        while writing or after < total:
            page = await events_after(workspace.id, after, limit=500)
            for event in page:
                # The reader must never have to jump: every page continues where it stopped.
                assert event.sequence == after + 1, f"skipped from {after} to {event.sequence}"
                after = int(event.sequence)
                seen.append(after)
            if not page:
                await asyncio.sleep(0.005)

    reading = asyncio.create_task(reader())
    await asyncio.gather(*(writer(w) for w in range(WRITERS)))
    writing = False
    await asyncio.wait_for(reading, timeout=60)

    assert seen == list(range(1, total + 1))
    stored = [e.sequence for e in await events_after(workspace.id, 0, limit=total + 1)]
    assert stored == list(range(1, total + 1))
    assert (await Workspace.get(id=workspace.id)).last_sequence == total
