"""The tasks an MCP server keeps for its asking tools, and the watchers that end them.

A task (``tasks.py`` serves it over MCP) is one asking call the client did not wait on: its
cards were sent to the hub, and a watcher waits for their outcomes and records the tool's
result once every card has one. While the client may answer at its terminal, the task asks
for that input (the card's form, or the page of a secret); ``tasks/update`` brings the
answer, which races the people's surfaces like any terminal answer (``decisions.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ElicitResult, TextContent
from pydantic import ValidationError

from hub.protocol.interactions import ResponseError
from hub.sdk import Resolution
from plugins.mcp_server.decisions import Cancelled, Decisions, outcome_result
from plugins.mcp_server.forms import Form, note_for
from plugins.mcp_server.results import Decision

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
        cards = task.form.cards
        # Answered: no input is outstanding any more while the answer is recorded.
        self._change(task, form=None, page=None, status="working")
        for handle, card, answer in zip(task.handles, cards, answers, strict=True):
            await self.decisions.answer_in_terminal(handle, answer, note_for(card, answer))

    async def cancel(self, task: HubTask) -> None:
        """``tasks/cancel``: take the task's cards back in the hub; nothing was approved."""
        if task.status in TERMINAL:
            return
        task.cancelling = True
        for handle in task.handles:
            # A card answered meanwhile keeps its answer (and the task completes with it).
            await self.decisions.withdraw(handle, "Cancelled by the agent's client.")

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
            self._change(task, form=None, page=None, status="completed", message=_said(decisions))
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


def _decided(outcome: Resolution | Cancelled) -> bool:
    return isinstance(outcome, Resolution) and not (outcome.expired or outcome.withdrawn)


def _said(decisions: list[Decision]) -> str:
    """A line on how the task ended, e.g. "decided via telegram"."""
    return "; ".join(d["status"] + (f" via {d['via']}" if "via" in d else "") for d in decisions)


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
