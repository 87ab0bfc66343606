"""The workspace feed: backlog then live, in order, each sequence once, whatever the bus does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from hub.core.log.bus import EventBus, PublishedEvent
from hub.core.log.envelopes import to_published
from hub.core.log.events import append_event
from hub.core.log.feed import WorkspaceFeed
from hub.core.store.models import Workspace


async def note(workspace: Workspace, bus: EventBus, n: int) -> int:
    return (
        await append_event(workspace.id, "note.added", {"n": n}, actor="system", bus=bus)
    ).sequence


async def take(events: AsyncIterator[PublishedEvent], count: int) -> list[int]:
    async def collect() -> list[int]:
        return [(await anext(events)).sequence for _ in range(count)]

    return await asyncio.wait_for(collect(), timeout=10)


async def test_backlog_then_live_in_order(workspace: Workspace) -> None:
    bus = EventBus()
    for n in range(5):
        await note(workspace, bus, n)
    async with WorkspaceFeed(workspace.id, 2, bus=bus) as feed:
        events = aiter(feed)
        assert await take(events, 3) == [3, 4, 5]
        for n in range(3):
            await note(workspace, bus, n)
        assert await take(events, 3) == [6, 7, 8]
    assert bus.subscriber_count() == 0


async def test_a_gap_on_the_bus_is_read_from_the_log(workspace: Workspace) -> None:
    bus, elsewhere = EventBus(), EventBus()
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        await note(workspace, bus, 1)
        assert await take(events, 1) == [1]
        # Sequence 2 reaches only another bus (another process, a lost publish): the feed
        # learns of it when 3 arrives and reads it from the log.
        await note(workspace, elsewhere, 2)
        await note(workspace, bus, 3)
        assert await take(events, 2) == [2, 3]


async def test_out_of_order_and_repeated_publishes_come_out_once_in_order(
    workspace: Workspace,
) -> None:
    bus, silent = EventBus(), EventBus()
    first = await append_event(workspace.id, "note.added", {}, actor="system", bus=silent)
    second = await append_event(workspace.id, "note.added", {}, actor="system", bus=silent)
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        assert await take(events, 2) == [1, 2]
        # Late and repeated copies of what the log already gave are skipped.
        bus.publish(to_published(second.event))
        bus.publish(to_published(first.event))
        await note(workspace, bus, 3)
        assert await take(events, 1) == [3]


async def test_a_dropped_reader_catches_up_from_the_log(workspace: Workspace) -> None:
    bus = EventBus(queue_size=3)
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        await note(workspace, bus, 0)
        assert await take(events, 1) == [1]
        for n in range(20):  # far more than the queue holds while nobody reads
            await note(workspace, bus, n)
        assert await take(events, 20) == list(range(2, 22))
        assert feed.resyncs == 1
        await note(workspace, bus, 99)
        assert await take(events, 1) == [22]


async def test_transient_frames_pass_through(workspace: Workspace) -> None:
    bus = EventBus()
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        bus.publish(
            PublishedEvent(
                workspace_id=workspace.id,
                sequence=0,
                type="message.delta",
                recipient_agent_id=None,
                envelope={"type": "message.delta", "payload": {"delta": "Hel"}},
            )
        )
        delta = await asyncio.wait_for(anext(events), timeout=10)
        assert delta.type == "message.delta" and feed.last_sequence == 0
        await note(workspace, bus, 1)
        assert await take(events, 1) == [1]


async def test_many_concurrent_writers_reach_the_reader_in_order(workspace: Workspace) -> None:
    bus = EventBus()
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        reader = asyncio.create_task(take(events, 60))
        await asyncio.gather(*(note(workspace, bus, n) for n in range(60)))
        assert await reader == list(range(1, 61))
