"""MCP tasks for the asking tools: a handle the client polls, cancels and hears about.

A person may take minutes or hours to answer. A client that declares the tasks extension
(``io.modelcontextprotocol/tasks``, protocol 2026-07-28) on its call gets a task at once
instead of a call held open: ``tasks/get`` tells how it stands (``working``;
``input_required`` while the terminal may answer; ``completed`` with the decision as the
tool's result; ``cancelled``), ``tasks/update`` carries the terminal's answer, and
``tasks/cancel`` takes the card back in the hub. ``subscriptions/listen`` with
``taskIds`` streams ``notifications/tasks`` as each changes. Clients that do not declare
the extension keep the hub's own pending handle and ``get_decision``.

A task is the request it stands for: its id is the handle of its card (the first card's,
for a batch), so it is as unguessable as the handle and outlives this server. After a
restart, or once an idle agent was closed and opened again, ``tasks/get`` finds a single
card's task again from its handle and the answers the SDK keeps; what a restart loses is
only a batch's grouping (each card's handle still works with get_decision).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolRequestParams,
    RequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from plugins.mcp_server.task_board import TASK_WANTED, TERMINAL, HubTask, TaskBoard, TaskWanted

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


class TasksExtension(Extension):
    """The tasks extension on an MCP server: its three methods, and asking tools as tasks."""

    identifier = TASKS_EXTENSION

    def __init__(self, asking_tools: frozenset[str]) -> None:
        self.asking_tools = asking_tools

    def methods(self) -> list[MethodBinding]:
        versions = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", TaskParams, _get, versions),
            MethodBinding("tasks/update", TaskUpdateParams, _update, versions),
            MethodBinding("tasks/cancel", TaskParams, _cancel, versions),
        ]

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        retry = params.input_responses is not None or params.request_state is not None
        if params.name not in self.asking_tools or retry or not wants_tasks(ctx):
            return await call_next(ctx)
        wanted = TaskWanted()
        token = TASK_WANTED.set(wanted)
        try:
            result = await call_next(ctx)
        finally:
            TASK_WANTED.reset(token)
        if wanted.task is None:
            return result  # refused before anything was asked: the error is the answer
        return {"resultType": "task", **_created(wanted.task)}


class TaskParams(RequestParams):
    task_id: str = Field(alias="taskId", min_length=1, max_length=200)


class TaskUpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses", default_factory=dict)


class _Notification(BaseModel):
    """A notification the SDK has no model for, sent as it is."""

    method: str
    params: dict[str, Any]


def wants_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    extensions = (capabilities.extensions or {}) if capabilities is not None else {}
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and TASKS_EXTENSION in extensions


async def _get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
    return {"resultType": "complete", **_task(ctx, params.task_id).wire()}


async def _update(ctx: ServerRequestContext[Any, Any], params: TaskUpdateParams) -> dict[str, Any]:
    await _board(ctx).answer(_task(ctx, params.task_id), params.input_responses)
    return {"resultType": "complete"}


async def _cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
    await _board(ctx).cancel(_task(ctx, params.task_id))
    return {"resultType": "complete"}


def _board(ctx: ServerRequestContext[Any, Any]) -> TaskBoard:
    if not wants_tasks(ctx):
        raise _missing_capability()
    board: TaskBoard = ctx.lifespan_context.tasks
    return board


def _task(ctx: ServerRequestContext[Any, Any], task_id: str) -> HubTask:
    task = _board(ctx).find(task_id)
    if task is None:
        raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: no task {task_id!r} of yours")
    return task


def _missing_capability() -> MCPError:
    return MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def _created(task: HubTask) -> dict[str, Any]:
    created = task.wire()
    created.pop("inputRequests", None)  # they come with tasks/get, not with the handle
    return created


async def listen_for_tasks(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Middleware: ``subscriptions/listen`` with ``taskIds`` streams those tasks'
    ``notifications/tasks`` (the SDK's own listener knows only list and resource events,
    which this server never sends)."""
    wanted = ((ctx.params or {}).get("notifications") or {}).get("taskIds")
    if ctx.method != "subscriptions/listen" or not wanted:
        return await call_next(ctx)
    board = _board(ctx)
    tasks = [t for t in (board.find(str(i)) for i in wanted) if t is not None]
    meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
    changed: asyncio.Queue[HubTask] = asyncio.Queue()
    ids = {t.task_id for t in tasks}

    def heard(task: HubTask) -> None:
        if task.task_id in ids:
            changed.put_nowait(task)

    async def send(method: str, params: dict[str, Any]) -> None:
        await ctx.session.send_notification(
            _Notification(method=method, params={**params, "_meta": meta}),  # type: ignore[arg-type]
            related_request_id=ctx.request_id,
        )

    with board.listening(heard):
        acknowledged = {"notifications": {"taskIds": sorted(ids)}}
        await send("notifications/subscriptions/acknowledged", acknowledged)
        async for task in _until_all_end(tasks, changed):
            await send("notifications/tasks", task.wire())
    return {"resultType": "complete", "_meta": meta}


async def _until_all_end(
    tasks: list[HubTask], changed: asyncio.Queue[HubTask]
) -> AsyncIterator[HubTask]:
    """Each task that has ended, then each change, until every task has ended."""
    open_ids = {t.task_id for t in tasks if t.status not in TERMINAL}
    for task in tasks:
        if task.status in TERMINAL:
            yield task
    while open_ids:
        task = await changed.get()
        yield task
        if task.status in TERMINAL:
            open_ids.discard(task.task_id)
