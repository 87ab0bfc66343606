"""Cards this MCP agent asked, and waiting for the answers people give to them.

A tool that asks a person must not block forever: an LLM client gives up on a call after a
few minutes. So the wait is bounded; the card stays open in the hub, and its id is the
pending handle ``get_decision`` waits on later. Answers arrive as ``interaction.resolved``
downlinks; the SDK stores each one in its state file before any handler runs, so an answer
given while this process was down is found after a restart, not lost.

A person may also cancel the task a card belongs to; the card then takes no answer, so the
wait ends at once with the cancellation instead of running out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hub.protocol.interactions import InteractionCard
from hub.sdk import Agent, Downlink, Resolution
from hub.sdk.ids import new_id

# While waiting, the client hears from us this often: each progress notification resets its
# read timeout and tells the person at the terminal the call is alive, not hung.
PROGRESS_EVERY_S = 10.0

Tick = Callable[[float, float], Awaitable[None]]


@dataclass(frozen=True)
class Cancelled:
    """The card's task was cancelled: no answer will come."""

    handle: str
    task_id: str
    reason: str


@dataclass
class Asked:
    card: InteractionCard
    task_id: str | None
    asked_at: datetime

    def summary(self) -> dict[str, Any]:
        return {
            "handle": self.card.id,
            "type": self.card.type.value,
            "title": self.card.title,
            "taskId": self.task_id,
            "askedAt": self.asked_at.isoformat(),
        }


class Decisions:
    def __init__(self, agent: Agent, progress_every_s: float = PROGRESS_EVERY_S) -> None:
        self.agent = agent
        self.progress_every_s = progress_every_s
        self.pending: dict[str, Asked] = {}
        self._answers: dict[str, asyncio.Future[Resolution | Cancelled]] = {}
        agent.on("interaction.resolved")(self._resolved)
        agent.on("task.cancel_requested")(self._task_cancelled)

    async def ask(self, card: InteractionCard, task_id: str | None) -> str:
        """Send ``card`` (the hub validates and stores it); returns its id, the handle."""
        card = card.model_copy(update={"id": card.id or new_id("int")})
        assert card.id is not None
        # Listed before sending: the answer may arrive before the hub's ack does.
        self._future(card.id)
        self.pending[card.id] = Asked(card, task_id, datetime.now(UTC))
        try:
            await self.agent.send(
                "interaction.requested", {"interaction": card.wire()}, task_id=task_id
            )
        except BaseException:
            self.pending.pop(card.id, None)
            self._answers.pop(card.id, None)
            raise
        return card.id

    def known(self, handle: str) -> Resolution | None:
        stored = self.agent.state.resolutions.get(handle)
        return Resolution.from_payload(stored) if stored is not None else None

    async def wait(self, handle: str, wait_s: float, tick: Tick) -> Resolution | Cancelled | None:
        """The answer to ``handle``, or None if none came within ``wait_s`` seconds.

        ``tick(elapsed, wait_s)`` is awaited every ``progress_every_s`` while waiting.
        """
        answer = self.known(handle)
        if answer is not None:
            return answer
        future = self._future(handle)
        started = time.monotonic()
        while True:
            elapsed = time.monotonic() - started
            left = wait_s - elapsed
            if left <= 0:
                return None
            try:
                return await asyncio.wait_for(
                    asyncio.shield(future), min(left, self.progress_every_s)
                )
            except TimeoutError:
                await tick(min(time.monotonic() - started, wait_s), wait_s)

    def _future(self, handle: str) -> asyncio.Future[Resolution | Cancelled]:
        future = self._answers.get(handle)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._answers[handle] = future
        return future

    async def _resolved(self, downlink: Downlink) -> None:
        answer = Resolution.from_payload(downlink.payload)
        self.pending.pop(answer.interaction_id, None)
        future = self._answers.pop(answer.interaction_id, None)
        if future is not None and not future.done():
            future.set_result(answer)

    async def _task_cancelled(self, downlink: Downlink) -> None:
        task_id = str(downlink.payload.get("taskId") or "")
        reason = str(downlink.payload.get("reason") or "")
        for handle, asked in list(self.pending.items()):
            if asked.task_id and asked.task_id == task_id:
                del self.pending[handle]
                future = self._answers.pop(handle, None)
                if future is not None and not future.done():
                    future.set_result(Cancelled(handle, task_id, reason))


def decision_result(answer: Resolution) -> dict[str, Any]:
    """What an asking tool returns once a person answered: the answer, who, via what, when."""
    result: dict[str, Any] = {
        "status": "decided",
        "handle": answer.interaction_id,
        "decidedBy": answer.responded_by,
        "via": answer.via,
        "decidedAt": answer.responded_at.isoformat(),
    }
    if answer.option_id is not None:
        result["optionId"] = answer.option_id
        result["approved"] = answer.approved
    if "optionIds" in answer.response:
        result["optionIds"] = answer.option_ids
    if answer.text is not None:
        result["text"] = answer.text
    if answer.comment is not None:
        result["comment"] = answer.comment
    if answer.action is not None:  # the exact action decided on, bound by its hash
        result["action"] = answer.action
        result["actionHash"] = answer.action_hash
        if answer.edited_from:
            result["editedFrom"] = answer.edited_from
    return result


def cancelled_result(cancelled: Cancelled) -> dict[str, Any]:
    return {
        "status": "cancelled",
        "handle": cancelled.handle,
        "taskId": cancelled.task_id,
        "reason": cancelled.reason,
        "next": "The person cancelled this task, so the request takes no answer. Stop the "
        "task's work; do not do what you asked about.",
    }


def pending_result(handle: str, waited_s: float) -> dict[str, Any]:
    return {
        "status": "pending",
        "handle": handle,
        "waitedSeconds": round(waited_s),
        "next": "Nobody has answered yet; the request stays open on the person's surfaces. "
        "Call get_decision with this handle to wait again or collect the answer later.",
    }
