"""Tasks from a person's side: create, list, look into, ask to cancel (spec §6.2, §7.2).

Creating a task logs ``task.created``; the projection queues it and addresses it to its agent,
which receives it as ``task.assigned``. Cancelling is only ever a *request*
(``task.cancel_requested``): the task keeps its status until the agent confirms it stopped or
the timeout policy ends it.
"""

from __future__ import annotations

from typing import Any

from hub.core.agents.remote import remote_call_view
from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.log.idempotency import envelope_id_for
from hub.core.store.models import Artifact, Event, Interaction, Message, Task
from hub.core.store.paging import Order, Page, page
from hub.core.task_states import ACTIVE_STATUSES, TERMINAL_STATUSES, TaskStatus
from hub.core.work.conversations import clean_title, get_conversation
from hub.core.work.interactions import responder_names
from hub.core.work.recipients import deliverable_agent
from hub.core.work.sensitive_answers import envelopes_for_people
from hub.core.work.views import artifact_view, interaction_view, message_view, task_view

MAX_DESCRIPTION_LENGTH = 200_000
MAX_REASON_LENGTH = 2000
TIMELINE_LIMIT = 2000
TASK_ORDER = Order("tasks", ("created_at",))

# The task list's tabs (spec §6): named views over the state machine's statuses.
TASK_VIEWS: dict[str, frozenset[TaskStatus]] = {
    "active": ACTIVE_STATUSES,
    "waiting_for_me": frozenset({TaskStatus.WAITING_FOR_HUMAN}),
    "done": TERMINAL_STATUSES,
}


_STATUS_VALUES = frozenset(s.value for s in TaskStatus)


def statuses_for(status_filter: str) -> frozenset[str]:
    """The statuses a ``?status=`` filter names: a view, a status, or a comma-separated list."""
    statuses: set[str] = set()
    for part in (p.strip() for p in status_filter.split(",")):
        if not part:
            continue
        if part in TASK_VIEWS:
            statuses.update(s.value for s in TASK_VIEWS[part])
        elif part in _STATUS_VALUES:
            statuses.add(part)
        else:
            known = ", ".join([*TASK_VIEWS, *(s.value for s in TaskStatus)])
            raise InvalidInput(
                f"{part!r} is not a task status or view.",
                code="unknown_status_filter",
                hint=f"Use one or more (comma-separated) of: {known}.",
            )
    if not statuses:
        raise InvalidInput("The status filter is empty.", code="unknown_status_filter")
    return frozenset(statuses)


async def create_task(
    workspace_id: str,
    title: str,
    *,
    by: str,
    target_agent_id: str,
    description: str = "",
    conversation_id: str | None = None,
    idempotency_key: str | None = None,
) -> Task:
    title = clean_title(title)
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise InvalidInput(
            f"The description is longer than {MAX_DESCRIPTION_LENGTH} characters.",
            code="description_too_long",
        )
    agent = await deliverable_agent(workspace_id, target_agent_id)
    if conversation_id is not None:
        conversation_id = (await get_conversation(workspace_id, conversation_id)).id
    task_id = new_id("task")
    payload: dict[str, Any] = {
        "taskId": task_id,
        "title": title,
        "description": description,
        "targetAgentId": agent.id,
    }
    if conversation_id is not None:
        payload["conversationId"] = conversation_id
    result = await append_event(
        workspace_id,
        "task.created",
        payload,
        actor=by,
        task_id=task_id,
        conversation_id=conversation_id,
        envelope_id=envelope_id_for(idempotency_key, actor=by, purpose="task"),
    )
    return await get_task(workspace_id, result.event.payload["taskId"])


async def list_tasks(
    workspace_id: str,
    *,
    status: str | None = None,
    conversation_id: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> Page[Task]:
    """A page of the workspace's tasks, newest first, filtered by ``?status=`` (see
    ``statuses_for``). A task's creation time never changes, so its place in the list never
    does either."""
    query = Task.filter(workspace_id=workspace_id)
    if status is not None:
        query = query.filter(status__in=sorted(statuses_for(status)))
    if conversation_id is not None:
        query = query.filter(conversation_id=conversation_id)
    return await page(query, TASK_ORDER, limit=limit, cursor=cursor)


async def get_task(workspace_id: str, task_id: str) -> Task:
    task = await Task.filter(id=task_id, workspace_id=workspace_id).first()
    if task is None:
        raise NotFound(f"Task {task_id} does not exist in this workspace.", code="task_not_found")
    return task


async def task_detail(workspace_id: str, task_id: str) -> dict[str, Any]:
    """The task with its child tasks, interactions, artifacts, messages (its result among
    them), event timeline and, for a remote agent's task, the remote's own state
    (``remote``, else ``None``).

    The timeline holds the events of the task and of its children, in log order, so a
    person can trace every step (spec §4: everything traceable).
    """
    task = await get_task(workspace_id, task_id)
    children = await Task.filter(workspace_id=workspace_id, parent_id=task.id).order_by(
        "created_at", "id"
    )
    interactions = await Interaction.filter(workspace_id=workspace_id, task_id=task.id).order_by(
        "created_at", "id"
    )
    artifacts = await Artifact.filter(workspace_id=workspace_id, task_id=task.id).order_by(
        "created_at", "id"
    )
    messages = await Message.filter(workspace_id=workspace_id, task_id=task.id).order_by(
        "created_at", "id"
    )
    timeline = (
        await Event.filter(
            workspace_id=workspace_id, task_id__in=[task.id, *(c.id for c in children)]
        )
        .order_by("sequence")
        .limit(TIMELINE_LIMIT)
    )
    names = await responder_names(interactions)
    return {
        **task_view(task),
        "children": [task_view(child) for child in children],
        "interactions": [
            interaction_view(i, responder_name=names.get(i.responded_by or ""))
            for i in interactions
        ],
        "artifacts": [artifact_view(a) for a in artifacts],
        "messages": [message_view(m) for m in messages],
        "timeline": await envelopes_for_people(workspace_id, timeline),
        "remote": await remote_call_view(task.id),  # how a remote (A2A) agent reports it
    }


async def request_cancel(
    workspace_id: str,
    task_id: str,
    *,
    by: str,
    reason: str = "",
    idempotency_key: str | None = None,
) -> Task:
    """Ask the task's agent to stop. The task's status does not change here."""
    if len(reason) > MAX_REASON_LENGTH:
        raise InvalidInput(
            f"The reason is longer than {MAX_REASON_LENGTH} characters.", code="reason_too_long"
        )
    task = await get_task(workspace_id, task_id)
    await append_event(
        workspace_id,
        "task.cancel_requested",
        {"taskId": task.id, "reason": reason.strip()},
        actor=by,
        task_id=task.id,
        conversation_id=task.conversation_id,
        envelope_id=envelope_id_for(idempotency_key, actor=by, purpose="cancel"),
    )
    return await get_task(workspace_id, task.id)
