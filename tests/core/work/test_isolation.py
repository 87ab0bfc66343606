"""No core service reads or writes another workspace's data (spec §11).

Workspace B's agent tries to act on workspace A's objects by id; every attempt is refused
as "not found" (so ids of other workspaces cannot even be probed) and changes nothing.
"""

from __future__ import annotations

import pytest

from hub.core.errors import HubError, NotFound
from hub.core.ids import new_id
from hub.core.log.events import append_event, events_after, last_sequence
from hub.core.people.accounts import require_membership
from hub.core.store.models import Artifact, Message, Task
from tests.core.scenario import make_agent, run_scenario


@pytest.fixture
async def two_workspaces(make_user):  # type: ignore[no-untyped-def]
    _, ws_a = await make_user("alice")
    owner_b, ws_b = await make_user("bob")
    agent_a, agent_b = await make_agent(ws_a), await make_agent(ws_b)
    ids = await run_scenario(ws_a, agent_a)
    return {"a": ws_a, "b": ws_b, "agent_b": agent_b, "owner_b": owner_b, **ids}


def attempts(ids: dict[str, str]) -> list[tuple[str, dict[str, object]]]:
    return [
        ("task.accepted", {"taskId": ids["task"]}),
        ("task.status_changed", {"taskId": ids["task"], "status": "failed"}),
        ("task.cancel_requested", {"taskId": ids["task"]}),
        (
            "task.child_created",
            {
                "taskId": new_id("task"),
                "parentTaskId": ids["task"],
                "title": "x",
                "status": "queued",
            },
        ),
        ("task.created", {"taskId": new_id("task"), "title": "x", "parentTaskId": ids["task"]}),
        (
            "message.created",
            {
                "messageId": new_id("message"),
                "conversationId": ids["conversation"],
                "content": "hi",
            },
        ),
        (
            "interaction.resolved",
            {
                "interactionId": ids["interaction"],
                "response": {"optionId": "reject"},
                "respondedBy": "user:usr_b",
                "via": "web",
            },
        ),
        ("interaction.expired", {"interactionId": ids["interaction"]}),
        (
            "artifact.created",
            {
                "artifactId": new_id("artifact"),
                "taskId": ids["task"],
                "name": "x",
                "url": "https://example.com",
            },
        ),
    ]


async def test_another_workspace_cannot_touch_these_objects(two_workspaces) -> None:  # type: ignore[no-untyped-def]
    ws_b, agent_b = two_workspaces["b"], two_workspaces["agent_b"]
    for actor in (f"agent:{agent_b.id}", "user:usr_b"):
        for event_type, payload in attempts(two_workspaces):
            with pytest.raises(HubError) as refused:
                await append_event(ws_b.id, event_type, payload, actor=actor)
            assert refused.value.status in (404, 409), (event_type, refused.value)
    assert await last_sequence(ws_b.id) == 0
    task = await Task.get(id=two_workspaces["task"])
    assert task.status == "succeeded" and task.workspace_id == two_workspaces["a"].id
    assert await Message.filter(workspace_id=ws_b.id).count() == 0
    assert await Artifact.filter(workspace_id=ws_b.id).count() == 0


async def test_replay_reads_only_its_own_workspace(two_workspaces) -> None:  # type: ignore[no-untyped-def]
    assert await events_after(two_workspaces["b"].id, 0) == []
    own = await events_after(two_workspaces["a"].id, 0)
    assert own and {e.workspace_id for e in own} == {two_workspaces["a"].id}


async def test_membership_guards_every_workspace(two_workspaces) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFound):
        await require_membership(two_workspaces["owner_b"], two_workspaces["a"].id)
    assert (
        await require_membership(two_workspaces["owner_b"], two_workspaces["b"].id)
    ).role == "owner"


async def test_an_agent_cannot_report_on_another_agents_task(workspace) -> None:  # type: ignore[no-untyped-def]
    owner_agent, other_agent = await make_agent(workspace), await make_agent(workspace, "other")
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "t", "targetAgentId": owner_agent.id},
        actor="user:usr_x",
    )
    with pytest.raises(HubError) as refused:
        await append_event(
            workspace.id, "task.accepted", {"taskId": task_id}, actor=f"agent:{other_agent.id}"
        )
    assert refused.value.code == "task_not_yours"
    assert (await Task.get(id=task_id)).status == "queued"
