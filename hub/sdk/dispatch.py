"""Handing downlink events to the adapter's handlers: in sequence order, each once.

``task.assigned`` starts the ``on_task`` handler in an asyncio task of its own (several
tasks run side by side); every other event goes to its ``on(type)`` handlers one after
another. An event is *finished* (and the saved position may pass it) when its handlers
return, except that a task's ``task.assigned`` and any cancel request for it finish only
when the task's handler ends: an adapter that stops mid-task gets both again next run and
resumes the work.

The task handler's outcome is reported for it: returning means ``succeeded`` (unless it
reported an end itself), ``TaskCancelled`` means ``cancelled``, any other exception
``failed`` with the error. A cancel request for a task no handler is running here is
confirmed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hub.protocol.base import WireModel
from hub.protocol.lap import DOWNLINK_PAYLOADS, Ack
from hub.sdk.errors import AgentClosed, HubRefused, TaskCancelled
from hub.sdk.task import Task
from hub.sdk.uplink import Uplink

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Downlink:
    """A frame from the hub as handlers see it; ``payload`` is camelCase as on the wire."""

    type: str
    sequence: int | None
    payload: dict[str, Any]
    envelope: dict[str, Any]

    def parsed(self) -> WireModel | None:
        """The payload as its protocol model, or None for a type this SDK does not know."""
        model = DOWNLINK_PAYLOADS.get(self.type)
        return model.model_validate(self.payload) if model else None


Handler = Callable[[Downlink], Awaitable[None]]
TaskHandler = Callable[[Task], Awaitable[None]]
F = TypeVar("F", bound=Callable[..., Awaitable[None]])


@dataclass
class _Running:
    task: Task
    # Sequences finished only when the handler ends: its task.assigned, and any cancel
    # request for it, so that a crash mid-task replays both and the work resumes.
    sequences: list[int] = field(default_factory=list)


class Dispatcher:
    def __init__(self, uplink: Uplink, *, finished: Callable[[int], None]) -> None:
        self.uplink = uplink  # what task handlers report through
        self.finished = finished  # the saved position may pass this sequence
        self.task_handler: TaskHandler | None = None
        self.handlers: dict[str, list[Handler]] = defaultdict(list)
        self._queue: asyncio.Queue[Downlink] = asyncio.Queue()
        self._running: dict[str, _Running] = {}
        self._cancel_requests: dict[str, str] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self._runners: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        if self._loop_task is None:
            self._loop_task = asyncio.create_task(self._run(), name="lineup-dispatch")

    async def stop(self) -> None:
        """Stop dispatching; running task handlers are cancelled without reporting."""
        jobs = [t for t in (self._loop_task, *self._runners) if t is not None]
        for job in jobs:
            job.cancel()
        for job in jobs:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await job

    def put(self, event: Downlink) -> None:
        self._queue.put_nowait(event)

    def cancel_requested(self, task_id: str, reason: str) -> None:
        """Tell a running handler at once, even while other events wait in the queue."""
        self._cancel_requests[task_id] = reason
        running = self._running.get(task_id)
        if running is not None:
            running.task._cancel(reason)

    async def _run(self) -> None:
        while True:
            event = await self._queue.get()
            if await self._deliver(event) and event.sequence is not None:
                self.finished(event.sequence)

    async def _deliver(self, event: Downlink) -> bool:
        """Hand ``event`` to its handlers; False if its sequence finishes later."""
        finish_now = True
        if event.type == "task.assigned" and self.task_handler is not None:
            data = event.payload.get("task")
            if not isinstance(data, dict) or not data.get("id"):
                logger.warning("ignoring task.assigned without a task: %.300r", event.payload)
                return True
            if str(data["id"]) in self._running:
                return True
            self._start_task(Task(self.uplink, data), event.sequence)
            return event.sequence is None
        if event.type == "task.cancel_requested":
            task_id = str(event.payload.get("taskId") or "")
            running = self._running.get(task_id)
            if running is not None and event.sequence is not None:
                running.sequences.append(event.sequence)
                finish_now = False
            elif running is None:
                await self._confirm_cancelled(task_id)
        for handler in list(self.handlers.get(event.type, ())):
            try:
                await handler(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("the %s handler failed", event.type)
        return finish_now

    def _start_task(self, task: Task, sequence: int | None) -> None:
        running = _Running(task, [sequence] if sequence is not None else [])
        self._running[task.id] = running
        if task.id in self._cancel_requests:
            task._cancel(self._cancel_requests[task.id])
        runner = asyncio.create_task(self._run_task_handler(running), name=f"lineup-{task.id}")
        self._runners.add(runner)
        runner.add_done_callback(self._runners.discard)

    async def _run_task_handler(self, running: _Running) -> None:
        task = running.task
        assert self.task_handler is not None
        try:
            await self.task_handler(task)
            if not task.ended:
                await task.succeed()
        except TaskCancelled:
            await _end_quietly(task.confirm_cancelled())
        except (AgentClosed, asyncio.CancelledError):
            raise  # closing: leave the task to be resumed by the next run
        except HubRefused as error:
            logger.warning("task %s: the hub refused a step: %s", task.id, error)
            if not task.ended:
                await _end_quietly(task.fail(f"{error.code}: {error.message}"))
        except Exception as error:
            logger.exception("task %s: the handler failed", task.id)
            if not task.ended:
                await _end_quietly(task.fail(f"{type(error).__name__}: {error}"))
        self._running.pop(task.id, None)
        self._cancel_requests.pop(task.id, None)
        for sequence in running.sequences:
            self.finished(sequence)

    async def _confirm_cancelled(self, task_id: str) -> None:
        if not task_id:
            return
        try:
            await self.uplink.send(
                "task.status_changed",
                {"taskId": task_id, "status": "cancelled"},
                envelope_id=f"{task_id}.cancelled",
                task_id=task_id,
                conversation_id=None,
            )
        except HubRefused as error:
            logger.info("cancel of %s not confirmed: %s", task_id, error)


async def _end_quietly(report: Awaitable[Ack]) -> None:
    try:
        await report
    except HubRefused as error:
        # Typically the task already ended (another surface cancelled it): nothing to do.
        logger.info("final report refused: %s", error)
