"""The log watch: events the bus never carried send live readers back to the log."""

from __future__ import annotations

import asyncio

import pytest

from hub.core.log.bus import EventBus, SubscriberDropped
from hub.core.log.events import append_event
from hub.core.log.feed import WorkspaceFeed
from hub.core.log.watch import LogWatch
from hub.core.store.models import Workspace
from hub.testing import eventually


async def note(workspace: Workspace, bus: EventBus) -> int:
    return (await append_event(workspace.id, "note.added", {}, actor="system", bus=bus)).sequence


async def test_an_event_written_elsewhere_reaches_a_quiet_reader(workspace: Workspace) -> None:
    bus, elsewhere = EventBus(), EventBus()
    watch = LogWatch(period_s=3600, bus=bus)  # looked at by hand below
    async with WorkspaceFeed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        await note(workspace, bus)
        assert (await asyncio.wait_for(anext(events), 10)).sequence == 1
        await watch.look()  # the log's end: 1, carried
        # Written by another process that notified nobody: no later event will wake the feed.
        missed = await note(workspace, elsewhere)
        await watch.look()  # the log's end is 2; give the bus a period to carry it
        next_event = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.05)
        assert not next_event.done()
        await watch.look()  # a period later, still not carried: the reader reads the log
        assert (await asyncio.wait_for(next_event, 10)).sequence == missed
        assert watch.catch_ups == 1
        assert feed.resyncs == 1


async def test_events_the_bus_carried_send_nobody_back(workspace: Workspace) -> None:
    bus = EventBus()
    watch = LogWatch(period_s=3600, bus=bus)
    with bus.subscribe(workspace.id) as subscription:
        await watch.look()
        for _ in range(3):
            await note(workspace, bus)
            await watch.look()
        await watch.look()
        assert watch.catch_ups == 0
        assert [subscription.get_nowait().sequence for _ in range(3)] == [1, 2, 3]
        assert subscription.get_nowait() is None


async def test_the_watch_runs_until_stopped(workspace: Workspace) -> None:
    bus, elsewhere = EventBus(), EventBus()
    watch = LogWatch(period_s=0.05, bus=bus)
    with bus.subscribe(workspace.id) as subscription:
        watch.start()
        try:
            await note(workspace, elsewhere)
            await eventually(lambda: watch.catch_ups, within=10)
        finally:
            await watch.stop()
        assert subscription.dropped


async def test_a_missed_downlink_is_found_though_later_events_were_carried(
    workspace: Workspace,
) -> None:
    """An agent's socket hears only its own events: a later event of the workspace that the
    bus carried must not hide the one for this agent that it never carried."""
    bus, elsewhere = EventBus(), EventBus()
    watch = LogWatch(period_s=3600, bus=bus)
    with bus.subscribe(workspace.id, addressee="agt_x") as for_x:
        await watch.look()
        missed = await append_event(
            workspace.id,
            "task.created",
            {"taskId": "tsk_1", "title": "Deploy", "targetAgentId": "agt_x"},
            actor="user:usr_x",
            bus=elsewhere,  # written where this bus does not hear of it
        )
        await note(workspace, bus)  # carried here, for everyone but agent x
        await watch.look()
        await watch.look()
        assert watch.catch_ups == 1
        assert for_x.dropped
        with pytest.raises(SubscriberDropped) as dropped:
            for_x.get_nowait()
        assert dropped.value.resync_from < missed.sequence  # it reads its event from the log


async def test_an_event_missed_before_the_watch_first_looks_is_still_found(
    workspace: Workspace,
) -> None:
    """The log's end at the watch's first look is not taken as delivered: an event written
    elsewhere between a reader's arrival and that look is found like any other."""
    bus, elsewhere = EventBus(), EventBus()
    await note(workspace, bus)  # history, before anyone here follows the workspace
    watch = LogWatch(period_s=3600, bus=bus)
    with bus.subscribe(workspace.id, addressee="agt_x") as for_x:
        await append_event(
            workspace.id,
            "task.created",
            {"taskId": "tsk_1", "title": "Deploy", "targetAgentId": "agt_x"},
            actor="user:usr_x",
            bus=elsewhere,
        )
        await watch.look()  # the first look: its end holds the missed event
        await watch.look()
        assert for_x.dropped and watch.catch_ups == 1
        await watch.look()
        assert watch.catch_ups == 1  # once: the bus counts it dealt with
