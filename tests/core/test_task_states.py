"""Every pair of task states against the diagram of spec §6.2, through the event log."""

from __future__ import annotations

import itertools

import pytest

from hub.core.errors import IllegalTransition
from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from hub.core.store.models import Task, Workspace
from hub.core.task_states import (
    ALLOWED_TRANSITIONS,
    TERMINAL_STATUSES,
    TaskStatus,
    check_transition,
)
from tests.core.scenario import make_agent

# Spec §6.2, written out by hand so that the table in task_states.py is checked, not echoed.
SPEC_DIAGRAM = {
    ("queued", "running"),
    ("running", "waiting_for_human"),
    ("waiting_for_human", "running"),
    ("running", "succeeded"),
    ("running", "failed"),
    ("queued", "cancelled"),
    ("running", "cancelled"),
    ("waiting_for_human", "cancelled"),
}
ALL_PAIRS = [(a.value, b.value) for a, b in itertools.product(TaskStatus, TaskStatus) if a != b]


def test_the_table_is_the_diagram() -> None:
    table = {(a.value, b.value) for a, targets in ALLOWED_TRANSITIONS.items() for b in targets}
    assert table == SPEC_DIAGRAM
    assert {s.value for s in TERMINAL_STATUSES} == {"succeeded", "failed", "cancelled"}


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS)
def test_check_transition(current: str, target: str) -> None:
    if (current, target) in SPEC_DIAGRAM:
        assert check_transition(current, target) == target
    else:
        with pytest.raises(IllegalTransition) as refused:
            check_transition(current, target)
        assert refused.value.code == "illegal_transition"
        assert refused.value.status == 409
        assert current in refused.value.hint


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS)
async def test_transitions_through_the_log(workspace: Workspace, current: str, target: str) -> None:
    agent = await make_agent(workspace)
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "t", "targetAgentId": agent.id},
        actor="user:usr_x",
    )
    await Task.filter(id=task_id).update(status=current)  # start from any state directly
    before = await last_sequence(workspace.id)
    attempt = append_event(
        workspace.id,
        "task.status_changed",
        {"taskId": task_id, "status": target},
        actor=f"agent:{agent.id}",
    )
    if (current, target) in SPEC_DIAGRAM:
        result = await attempt
        assert result.sequence == before + 1
        assert (await Task.get(id=task_id)).status == target
    else:
        with pytest.raises(IllegalTransition):
            await attempt
        assert (await Task.get(id=task_id)).status == current
        assert await last_sequence(workspace.id) == before


async def test_a_cancel_request_is_not_a_cancellation(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "t", "targetAgentId": agent.id},
        actor="user:usr_x",
    )
    await append_event(
        workspace.id, "task.accepted", {"taskId": task_id}, actor=f"agent:{agent.id}"
    )
    request = await append_event(
        workspace.id,
        "task.cancel_requested",
        {"taskId": task_id, "reason": "not needed"},
        actor="user:usr_x",
    )
    task = await Task.get(id=task_id)
    assert task.status == "running" and task.cancel_requested_at is not None
    assert request.event.recipient_agent_id == agent.id  # the agent is told
    await append_event(
        workspace.id,
        "task.status_changed",
        {"taskId": task_id, "status": "cancelled"},
        actor=f"agent:{agent.id}",
    )
    assert (await Task.get(id=task_id)).status == "cancelled"


async def test_an_ended_task_takes_no_progress_reports(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "t", "targetAgentId": agent.id},
        actor="user:usr_x",
    )
    await Task.filter(id=task_id).update(status="succeeded")
    with pytest.raises(IllegalTransition):
        await append_event(
            workspace.id,
            "task.status_changed",
            {"taskId": task_id, "status": "succeeded", "progress": 50},
            actor=f"agent:{agent.id}",
        )


def test_unknown_status_is_named() -> None:
    with pytest.raises(IllegalTransition) as refused:
        check_transition("running", "exploded")
    assert refused.value.code == "unknown_status"
    assert "queued" in refused.value.hint
