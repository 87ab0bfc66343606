"""Tasks from a person's side: creation routed to the agent, filters, detail, cancel requests."""

from __future__ import annotations

import pytest

from hub.core.errors import Conflict, InvalidInput, NotFound
from hub.core.log.events import events_after, last_sequence
from hub.core.store.models import Workspace
from hub.core.work.conversations import create_conversation
from hub.core.work.interactions import respond_to_interaction
from hub.core.work.tasks import (
    create_task,
    get_task,
    list_tasks,
    request_cancel,
    statuses_for,
    task_detail,
)
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent, revoked_agent
from tests.core.scenario import run_scenario

ME = "user:usr_me"


async def test_a_new_task_is_queued_and_assigned_to_its_agent(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task = await create_task(
        workspace.id, "Tidy dependencies", by=ME, target_agent_id=agent.id, description="all"
    )
    assert task.status == "queued" and task.target_agent_id == agent.id
    [routed] = await events_after(workspace.id, 0, recipient_agent_id=agent.id)
    assert routed.type == "task.created" and routed.task_id == task.id
    assert routed.payload == {
        "taskId": task.id,
        "title": "Tidy dependencies",
        "description": "all",
        "targetAgentId": agent.id,
    }


async def test_bad_tasks_are_refused_and_change_nothing(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    agent, foreign = await make_agent(mine), await make_agent(theirs)
    retired = await revoked_agent(mine)
    their_conversation = await create_conversation(theirs.id, "theirs", [], by=ME)
    attempts = [
        (NotFound, "agent_not_found", {"target_agent_id": foreign.id}),
        (Conflict, "agent_revoked", {"target_agent_id": retired.id}),
        (
            NotFound,
            "conversation_not_found",
            {"target_agent_id": agent.id, "conversation_id": their_conversation.id},
        ),
    ]
    for error, code, kwargs in attempts:
        with pytest.raises(error) as refused:
            await create_task(mine.id, "work", by=ME, **kwargs)  # type: ignore[arg-type]
        assert refused.value.code == code
    with pytest.raises(InvalidInput):
        await create_task(mine.id, "", by=ME, target_agent_id=agent.id)
    assert await last_sequence(mine.id) == 0


async def test_status_filters_name_views_statuses_or_lists(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    queued = await create_task(workspace.id, "queued", by=ME, target_agent_id=agent.id)
    running = await create_task(workspace.id, "running", by=ME, target_agent_id=agent.id)
    waiting = await create_task(workspace.id, "waiting", by=ME, target_agent_id=agent.id)
    done = await create_task(workspace.id, "done", by=ME, target_agent_id=agent.id)
    for task in (running, waiting, done):
        await agent_reports(agent, "task.accepted", {"taskId": task.id})
    await agent_asks(agent, waiting.id)
    await agent_reports(agent, "task.status_changed", {"taskId": done.id, "status": "succeeded"})

    async def titles(status: str | None) -> set[str]:
        return {t.title for t in (await list_tasks(workspace.id, status=status)).items}

    assert await titles(None) == {"queued", "running", "waiting", "done"}
    assert await titles("active") == {"queued", "running", "waiting"}
    assert await titles("waiting_for_me") == {"waiting"}
    assert await titles("done") == {"done"}
    assert await titles("queued,succeeded") == {"queued", "done"}
    assert queued.id in {t.id for t in (await list_tasks(workspace.id, status="queued")).items}
    with pytest.raises(InvalidInput) as unknown:
        statuses_for("sleeping")
    assert unknown.value.code == "unknown_status_filter"


async def test_detail_holds_children_interactions_artifacts_and_timeline(
    workspace: Workspace,
) -> None:
    agent = await make_agent(workspace)
    ids = await run_scenario(workspace, agent)
    detail = await task_detail(workspace.id, ids["task"])
    assert detail["status"] == "succeeded" and detail["progress"] == 100
    assert [c["title"] for c in detail["children"]] == ["Scan repo"]
    [interaction] = detail["interactions"]
    assert interaction["status"] == "resolved" and interaction["response"] == {
        "optionId": "approve"
    }
    assert [a["name"] for a in detail["artifacts"]] == ["plan.md"]
    assert detail["remote"] is None  # a local agent's task: no remote state to show
    timeline = detail["timeline"]
    sequences = [e["sequence"] for e in timeline]
    assert sequences == sorted(sequences)
    # Every step of the task and of its child, however the sender named the task.
    assert [e["type"] for e in timeline] == [
        "task.created",
        "task.accepted",
        "task.status_changed",
        "task.child_created",
        "interaction.requested",
        "interaction.resolved",
        "artifact.created",
        "task.status_changed",
        "task.status_changed",
    ]


async def test_cancel_is_a_request_not_a_state(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "long job", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    after = await last_sequence(workspace.id)
    requested = await request_cancel(workspace.id, task.id, by=ME, reason="  not needed ")
    assert requested.status == "running"
    assert requested.cancel_requested_at is not None and requested.cancel_reason == "not needed"
    [routed] = await events_after(workspace.id, after, recipient_agent_id=agent.id)
    assert routed.type == "task.cancel_requested" and routed.payload["reason"] == "not needed"


async def test_an_ended_task_cannot_be_cancelled(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "short job", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    await agent_reports(agent, "task.status_changed", {"taskId": task.id, "status": "failed"})
    before = await last_sequence(workspace.id)
    with pytest.raises(Conflict) as ended:
        await request_cancel(workspace.id, task.id, by=ME)
    assert ended.value.code == "task_ended"
    assert await last_sequence(workspace.id) == before
    assert (await get_task(workspace.id, task.id)).cancel_requested_at is None


async def test_another_workspace_task_is_not_found(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    task = await create_task(
        theirs.id, "theirs", by=ME, target_agent_id=(await make_agent(theirs)).id
    )
    for attempt in (
        get_task(mine.id, task.id),
        task_detail(mine.id, task.id),
        request_cancel(mine.id, task.id, by=ME),
    ):
        with pytest.raises(NotFound):
            await attempt
    assert (await list_tasks(mine.id)).items == []
    assert await last_sequence(mine.id) == 0


async def test_answering_moves_a_waiting_task_back_to_running(workspace: Workspace) -> None:
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "migrate", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    interaction_id = await agent_asks(agent, task.id)
    assert (await get_task(workspace.id, task.id)).status == "waiting_for_human"
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
    )
    assert (await get_task(workspace.id, task.id)).status == "running"
