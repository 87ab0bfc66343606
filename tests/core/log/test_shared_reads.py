"""Reads many callers make at once share one query (a storm of hellos), and none of them
reads rows older than it would have read alone."""

from __future__ import annotations

import asyncio

import pytest

from hub.core.agents.registry import agent_for_credential
from hub.core.errors import HubError
from hub.core.ids import new_id
from hub.core.log import events as events_module
from hub.core.log.events import (
    append_event,
    current_workspace,
    downlink_after,
    events_after,
    last_sequence,
)
from hub.core.store.models import Workspace
from hub.core.work.tasks import create_task
from tests.core.agent_setup import paired_agent
from tests.core.queries import record_queries
from tests.core.scenario import make_agent

ME = "user:usr_me"


async def test_hellos_at_once_look_their_agents_up_in_one_query(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = [await paired_agent(workspace, f"agent-{n}") for n in range(5)]
    queries = record_queries(monkeypatch)
    found = await asyncio.gather(
        *(agent_for_credential(credential) for _, credential in fleet),
        agent_for_credential(fleet[0][1]),
        agent_for_credential("lu_agt_not-a-credential"),
        return_exceptions=True,
    )
    assert len([q for q in queries if 'FROM "agent"' in q]) == 1
    assert [a.id for a in found[:6]] == [a.id for a, _ in fleet] + [fleet[0][0].id]  # type: ignore[union-attr]
    assert found[0] is not found[5]  # each caller its own row: one's edits are not another's
    assert isinstance(found[6], HubError) and found[6].code == "invalid_credential"


async def test_a_shared_read_of_the_workspace_is_never_older_than_the_call(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = record_queries(monkeypatch)
    rows = await asyncio.gather(*(current_workspace(workspace.id) for _ in range(20)))
    assert len([q for q in queries if 'FROM "workspace"' in q]) == 1
    assert len({id(row) for row in rows}) == 20

    # A read asked for after an append sees it, though another read was under way.
    before = asyncio.ensure_future(last_sequence(workspace.id))
    await asyncio.sleep(0)  # the first read's batch has started
    appended = await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": new_id("conversation"), "title": "x"},
        actor="system",
    )
    assert await last_sequence(workspace.id) == appended.sequence
    assert await before <= appended.sequence

    with pytest.raises(HubError) as missing:
        await current_workspace("ws_nothing_here")
    assert missing.value.code == "not_found"


async def test_replays_at_once_read_together_and_each_gets_its_own_page(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = [await make_agent(workspace, f"agent-{n}") for n in range(3)]
    tasks = {
        agent.id: [
            (
                await create_task(
                    workspace.id, f"{agent.name} {n}", by=ME, target_agent_id=agent.id
                )
            ).id
            for n in range(3)
        ]
        for agent in fleet
    }

    async def replays(after: dict[str, int], limit: int = 10) -> dict[str, list[str]]:
        pages = await asyncio.gather(
            *(downlink_after(workspace.id, a, s, limit=limit) for a, s in after.items())
        )
        return {a: [e.task_id or "" for e in page] for a, page in zip(after, pages, strict=True)}

    first, second, third = (agent.id for agent in fleet)
    sequences = {
        e.task_id: e.sequence
        for e in await events_after(workspace.id, 0)
        if e.type == "task.created"
    }
    # Each from its own position: the second has seen one of its tasks, the third all.
    positions = {first: 0, second: sequences[tasks[second][0]], third: 10**6}
    queries = record_queries(monkeypatch)
    together = await replays(positions)
    assert len([q for q in queries if 'FROM "event"' in q]) == 1
    assert together == {first: tasks[first], second: tasks[second][1:], third: []}
    assert (await replays(positions, limit=1))[first] == tasks[first][:1]

    # More waiting than a shared read takes: each reads its own page, the same answer.
    monkeypatch.setattr(events_module, "SHARED_REPLAY_ROWS", 2)
    assert await replays(positions) == together
