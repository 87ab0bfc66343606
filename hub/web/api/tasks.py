"""Tasks: create, list (``?status=``), detail with its timeline, ask to cancel."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.work.conversations import MAX_TITLE_LENGTH
from hub.core.work.tasks import (
    MAX_DESCRIPTION_LENGTH,
    MAX_REASON_LENGTH,
    create_task,
    list_tasks,
    request_cancel,
    task_detail,
)
from hub.core.work.views import task_view
from hub.host.identity import member_of
from hub.web.api.answers import TaskAnswer, TaskDetail, TaskList
from hub.web.api.base import ApiModel, PageQuery, idempotency_key, json_body, query_args

blueprint = Blueprint("api_tasks", __name__, url_prefix="/api/v1")


class NewTask(ApiModel):
    title: str = Field(min_length=1, max_length=MAX_TITLE_LENGTH)
    description: str = Field("", max_length=MAX_DESCRIPTION_LENGTH)
    target_agent_id: str = Field(min_length=1, max_length=40)
    conversation_id: str | None = Field(None, max_length=40)


class TaskFilter(PageQuery):
    status: str | None = Field(
        None,
        max_length=200,
        description="A view (active, waiting_for_me, done), a status (queued, running, "
        "waiting_for_human, succeeded, failed, cancelled), or several, comma-separated.",
    )
    conversation_id: str | None = Field(None, max_length=40)
    limit: int = Field(100, ge=1, le=500)


class CancelRequest(ApiModel):
    reason: str = Field("", max_length=MAX_REASON_LENGTH)


@blueprint.get("/workspaces/<ws>/tasks")
@document_response(TaskList)
@query_args(TaskFilter)
async def tasks(ws: str, query: TaskFilter) -> dict[str, Any]:
    """Tasks, newest first, a page at a time: pass ``nextCursor`` back as ``cursor`` for the
    next page (``null`` on the last)."""
    await member_of(ws)
    found = await list_tasks(
        ws,
        status=query.status,
        conversation_id=query.conversation_id,
        limit=query.limit,
        cursor=query.cursor,
    )
    return {"tasks": [task_view(t) for t in found.items], "nextCursor": found.next_cursor}


@blueprint.post("/workspaces/<ws>/tasks")
@document_response(TaskAnswer, 201)
@json_body(NewTask)
async def new_task(ws: str, body: NewTask) -> tuple[dict[str, Any], int]:
    """Create a task; it is queued and assigned to its agent (``task.assigned``)."""
    caller, _ = await member_of(ws, write=True)
    task = await create_task(
        ws,
        body.title,
        by=caller.actor,
        target_agent_id=body.target_agent_id,
        description=body.description,
        conversation_id=body.conversation_id,
        idempotency_key=idempotency_key(),
    )
    return task_view(task), 201


@blueprint.get("/workspaces/<ws>/tasks/<task_id>")
@document_response(TaskDetail)
async def task(ws: str, task_id: str) -> dict[str, Any]:
    """The task with ``children``, ``interactions``, ``artifacts``, ``timeline`` and ``remote``
    (a remote A2A agent's own state of it, ``unknown`` when the hub cannot place it)."""
    await member_of(ws)
    return await task_detail(ws, task_id)


@blueprint.post("/workspaces/<ws>/tasks/<task_id>/cancel")
@document_response(TaskAnswer, 202)
@json_body(CancelRequest, optional=True)
async def cancel(ws: str, task_id: str, body: CancelRequest) -> tuple[dict[str, Any], int]:
    """Ask the agent to stop (202): the status changes only when the agent confirms."""
    caller, _ = await member_of(ws, write=True)
    requested = await request_cancel(
        ws, task_id, by=caller.actor, reason=body.reason, idempotency_key=idempotency_key()
    )
    return task_view(requested), 202
