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
import contextlib
import contextvars
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolRequestParams,
    CallToolResult,
    ElicitResult,
    RequestParams,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from hub.protocol.interactions import ResponseError
from hub.sdk import Resolution
from plugins.mcp_server.decisions import Cancelled, Decisions, outcome_result
from plugins.mcp_server.forms import Form, note_for
from plugins.mcp_server.results import Decision

logger = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 2000
TERMINAL = frozenset({"completed", "failed", "cancelled"})
_FORM_ATTEMPTS = 3
# Ended tasks are kept for polling; past this many the oldest go (a single card's task is
# still found from its handle afterwards).
KEPT_TASKS = 500


@dataclass
class HubTask:
    """One asking call, as a task: its cards, and where they stand."""

    task_id: str
    handles: list[str]
    batch: bool
    form: Form | None = None  # while the terminal may still answer
    page: tuple[str, str] | None = None  # (message, URL) for a secret typed on the hub's page
    status: str = "working"
    status_message: str = "Waiting for a person to answer."
    result: dict[str, Any] | None = None
    round: int = 1
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    cancelling: bool = False

    def __post_init__(self) -> None:
        if self.form is not None or self.page is not None:
            self.status = "input_required"
            self.status_message = "Waiting for an answer, here or on the person's surfaces."

    def wire(self) -> dict[str, Any]:
        """The task as ``tasks/get`` and ``notifications/tasks`` carry it (DetailedTask)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.status_message,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": None,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.status == "input_required":
            task["inputRequests"] = {self.input_key: self._input_request()}
        if self.status == "completed":
            task["result"] = self.result
        return task

    @property
    def input_key(self) -> str:
        return f"answer-{self.round}"

    def _input_request(self, message: str | None = None) -> dict[str, Any]:
        if self.form is not None:
            params: dict[str, Any] = {
                "mode": "form",
                "message": message or self.form.message,
                "requestedSchema": self.form.schema,
            }
        else:
            assert self.page is not None
            params = {"mode": "url", "message": self.page[0], "url": self.page[1]}
        return {"method": "elicitation/create", "params": params}


# Set by the interceptor around an asking tool's call when the client wants a task: the tool
# sends its cards, then leaves the waiting to a task it records here.
@dataclass
class TaskWanted:
    task: HubTask | None = None


TASK_WANTED: contextvars.ContextVar[TaskWanted | None] = contextvars.ContextVar(
    "lineup_mcp_task_wanted", default=None
)


class TaskBoard:
    """The tasks of one MCP server (one agent), and the watchers that finish them."""

    def __init__(self, decisions: Decisions) -> None:
        self.decisions = decisions
        self.tasks: dict[str, HubTask] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._listeners: set[Callable[[HubTask], None]] = set()

    def start(
        self,
        handles: list[str],
        form: Form | None,
        page: tuple[str, str] | None,
    ) -> HubTask:
        task = HubTask(handles[0], handles, len(handles) > 1, form, page)
        self.tasks[task.task_id] = task
        self._watch(task)
        ended = [t for t in self.tasks.values() if t.status in TERMINAL]
        for old in ended[: max(0, len(self.tasks) - KEPT_TASKS)]:
            del self.tasks[old.task_id]
        return task

    def find(self, task_id: str) -> HubTask | None:
        """The task ``task_id``, also one this server started before it was restarted."""
        task = self.tasks.get(task_id)
        if task is None and self.decisions.knows(task_id):
            task = HubTask(task_id, [task_id], batch=False)
            self.tasks[task_id] = task
            self._watch(task)
        return task

    async def answer(self, task: HubTask, responses: dict[str, Any]) -> None:
        """``tasks/update``: the terminal's answer to the task's current input request."""
        raw = responses.get(task.input_key)
        if task.status != "input_required" or raw is None:
            return  # an answer to nothing outstanding is ignored, as the extension says
        try:
            response = ElicitResult.model_validate(raw)
        except ValidationError:
            raise MCPError(
                INVALID_PARAMS, f"inputResponses[{task.input_key!r}] is no elicitation result"
            ) from None
        if response.action != "accept" or task.form is None:
            # Declined, or the hub's page opened: the people's surfaces answer from here.
            self._change(task, form=None, page=None, status="working")
            return
        try:
            answers = task.form.answers(response.content)
        except ResponseError as error:
            if task.round >= _FORM_ATTEMPTS:
                self._change(task, form=None, status="working")
                return
            task.round += 1
            message = f"{error} Please answer again.\n\n{task.form.message}"
            task.form = Form(message, task.form.schema, task.form.cards)
            self._change(task)
            return
        for handle, card, answer in zip(task.handles, task.form.cards, answers, strict=True):
            await self.decisions.answer_in_terminal(handle, answer, note_for(card, answer))

    async def cancel(self, task: HubTask) -> None:
        """``tasks/cancel``: take the task's cards back in the hub; nothing was approved."""
        if task.status in TERMINAL:
            return
        task.cancelling = True
        for handle in task.handles:
            with contextlib.suppress(Exception):  # a card answered meanwhile keeps its answer
                await self.decisions.agent.withdraw_interaction(
                    handle, reason="no_longer_needed", note="Cancelled by the agent's client."
                )

    @contextlib.contextmanager
    def listening(self, listener: Callable[[HubTask], None]) -> Any:
        self._listeners.add(listener)
        try:
            yield
        finally:
            self._listeners.discard(listener)

    async def close(self) -> None:
        for watcher in self._watchers.values():
            watcher.cancel()
        for watcher in list(self._watchers.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        self._watchers.clear()

    def _watch(self, task: HubTask) -> None:
        self._watchers[task.task_id] = asyncio.create_task(
            self._finish(task), name=f"mcp-task-{task.task_id}"
        )

    async def _finish(self, task: HubTask) -> None:
        outcomes = [await self.decisions.outcome(h) for h in task.handles]
        decisions = [outcome_result(o) for o in outcomes]
        structured: Any = (
            {
                "status": "decided" if all(_decided(o) for o in outcomes) else "pending",
                "items": decisions,
            }
            if task.batch
            else decisions[0]
        )
        result = CallToolResult(
            content=[TextContent(type="text", text=json.dumps(structured, indent=2))],
            structured_content=structured,
        )
        task.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        withdrawn_here = task.cancelling and all(
            isinstance(o, Resolution) and o.withdrawn for o in outcomes
        )
        if withdrawn_here:
            self._change(task, form=None, page=None, status="cancelled", message="Cancelled.")
        else:
            self._change(
                task, form=None, page=None, status="completed", message=_summary(decisions)
            )
        self._watchers.pop(task.task_id, None)

    def _change(
        self,
        task: HubTask,
        *,
        status: str | None = None,
        message: str | None = None,
        **fields: Any,
    ) -> None:
        for name, value in fields.items():
            setattr(task, name, value)
        if status is not None:
            task.status = status
            task.status_message = message or "Waiting for a person to answer."
        task.updated_at = datetime.now(UTC)
        for listener in list(self._listeners):
            listener(task)


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


def _decided(outcome: Resolution | Cancelled) -> bool:
    return isinstance(outcome, Resolution) and not (outcome.expired or outcome.withdrawn)


def _summary(decisions: list[Decision]) -> str:
    return "; ".join(
        f"{d['status']}" + (f" via {d['via']}" if "via" in d else "") for d in decisions
    )


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
