"""The event log: sequences, idempotency, replay and rebuilding projections."""

from __future__ import annotations

import asyncio

import pytest

from hub.core.ids import new_id
from hub.core.log.bus import EventBus
from hub.core.log.events import append_event, events_after, last_sequence, rebuild_projections
from hub.core.store.models import Artifact, Conversation, Interaction, Message, Task, Workspace
from tests.core.scenario import make_agent, run_scenario


async def test_sequences_start_at_one_and_follow_each_other(workspace: Workspace) -> None:
    results = [
        await append_event(workspace.id, "note.added", {"n": n}, actor="system") for n in range(5)
    ]
    assert [r.sequence for r in results] == [1, 2, 3, 4, 5]
    assert not any(r.duplicate for r in results)
    assert await last_sequence(workspace.id) == 5


async def test_each_workspace_has_its_own_sequence(make_user) -> None:  # type: ignore[no-untyped-def]
    _, first = await make_user()
    _, second = await make_user()
    await append_event(first.id, "note.added", {}, actor="system")
    result = await append_event(second.id, "note.added", {}, actor="system")
    assert result.sequence == 1


async def test_a_repeated_envelope_id_returns_the_first_event(workspace: Workspace) -> None:
    first = await append_event(
        workspace.id, "note.added", {"v": 1}, actor="system", envelope_id="e-1"
    )
    again = await append_event(
        workspace.id, "note.added", {"v": 2}, actor="system", envelope_id="e-1"
    )
    assert again.duplicate and again.sequence == first.sequence
    assert again.event.payload == {"v": 1}
    assert await last_sequence(workspace.id) == 1


async def test_fifty_concurrent_copies_make_one_event(workspace: Workspace) -> None:
    results = await asyncio.gather(
        *(
            append_event(workspace.id, "note.added", {}, actor="system", envelope_id="same")
            for _ in range(50)
        )
    )
    assert sum(not r.duplicate for r in results) == 1
    assert sum(r.duplicate for r in results) == 49
    assert {r.sequence for r in results} == {1}
    assert [e.sequence for e in await events_after(workspace.id, 0)] == [1]
    # The sequence taken by each refused copy was given back: the next one is 2.
    assert (await append_event(workspace.id, "note.added", {}, actor="system")).sequence == 2


async def test_the_same_envelope_id_in_another_workspace_is_a_new_event(make_user) -> None:  # type: ignore[no-untyped-def]
    _, first = await make_user()
    _, second = await make_user()
    await append_event(first.id, "note.added", {}, actor="system", envelope_id="shared")
    other = await append_event(second.id, "note.added", {}, actor="system", envelope_id="shared")
    assert not other.duplicate and other.event.workspace_id == second.id


async def test_a_refused_event_changes_nothing(workspace: Workspace) -> None:
    from hub.core.errors import NotFound

    with pytest.raises(NotFound):
        await append_event(
            workspace.id, "task.accepted", {"taskId": "task_missing"}, actor="system"
        )
    assert await last_sequence(workspace.id) == 0
    assert await events_after(workspace.id, 0) == []


async def test_events_after_pages_in_order(workspace: Workspace) -> None:
    for n in range(12):
        await append_event(workspace.id, "note.added", {"n": n}, actor="system")
    page = await events_after(workspace.id, 4, limit=5)
    assert [e.sequence for e in page] == [5, 6, 7, 8, 9]


async def test_append_publishes_after_commit(workspace: Workspace) -> None:
    bus = EventBus()
    subscription = bus.subscribe(workspace.id)
    result = await append_event(workspace.id, "note.added", {"x": 1}, actor="system", bus=bus)
    published = subscription.get_nowait()
    assert published is not None and published.sequence == result.sequence
    assert published.envelope["payload"] == {"x": 1}
    assert published.envelope["version"] == "0.1"
    # A duplicate is not published again.
    await append_event(
        workspace.id, "note.added", {}, actor="system", envelope_id=result.event.id, bus=bus
    )
    assert subscription.get_nowait() is None


async def test_rebuilding_projections_gives_the_same_rows(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    await run_scenario(workspace, agent)

    async def snapshot() -> dict[str, list[dict[str, object]]]:
        rows = {}
        for model in (Conversation, Message, Task, Interaction, Artifact):
            rows[model.__name__] = (
                await model.filter(workspace_id=workspace.id).order_by("id").values()
            )
        return rows

    before = await snapshot()
    assert before["Task"] and before["Interaction"] and before["Artifact"] and before["Message"]
    await Task.filter(workspace_id=workspace.id).update(title="tampered")
    replayed = await rebuild_projections([workspace.id])
    assert replayed == await last_sequence(workspace.id)
    assert await snapshot() == before


async def test_envelope_ids_are_bounded(workspace: Workspace) -> None:
    from hub.core.errors import InvalidInput

    with pytest.raises(InvalidInput):
        await append_event(workspace.id, "note.added", {}, actor="system", envelope_id="x" * 101)


async def test_unknown_workspace_is_refused(db: str) -> None:
    from hub.core.errors import NotFound

    with pytest.raises(NotFound):
        await append_event(new_id("workspace"), "note.added", {}, actor="system")
