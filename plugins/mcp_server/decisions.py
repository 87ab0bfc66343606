"""Cards this MCP agent asked, and waiting for the answers people give to them.

A tool that asks a person must not block forever: an LLM client gives up on a call after a
few minutes. So the wait is bounded; the card stays open in the hub, and its id is the
pending handle ``get_decision`` waits on later. Answers arrive as ``interaction.resolved``
downlinks; the SDK stores each one in its state file before any handler runs, so an answer
given while this process was down is found after a restart, not lost.

A person may also cancel the task a card belongs to; the card then takes no answer, so the
wait ends at once with the cancellation instead of running out. A card whose time runs out
with nothing decided (``interaction.expired``) ends the wait too.

The person at the agent's own terminal may answer first (``elicitation.py``): the card is
then withdrawn in the hub as "answered in the terminal", and that answer is the decision.
If a person answered in the hub in the meantime, the hub refuses the withdrawal and their
answer stands: the first answer wins, wherever it was given.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hub.protocol.interactions import InteractionCard
from hub.protocol.lap import WithdrawalReason
from hub.sdk import Agent, Downlink, HubRefused, Resolution
from plugins.mcp_server.handles import Handles
from plugins.mcp_server.results import Decision

# The ``via`` and ``decidedBy`` of an answer given at the agent's own terminal.
TERMINAL = "terminal"

# While waiting, the client hears from us this often: each progress notification resets its
# read timeout and tells the person at the terminal the call is alive, not hung.
PROGRESS_EVERY_S = 10.0

KEPT_OUTCOMES = 500
# The hub's refusals of a withdrawal that mean "this card has an outcome already".
_CLOSED = frozenset({"already_decided", "interaction_expired", "interaction_cancelled"})

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
        self.handles = Handles(agent.credential)
        self._answers: dict[str, asyncio.Future[Resolution | Cancelled]] = {}
        agent.on("interaction.resolved")(self._resolved)
        agent.on("interaction.expired")(self._resolved)
        agent.on("task.cancel_requested")(self._task_cancelled)

    def knows(self, handle: str) -> bool:
        """Whether ``handle`` names a request of this agent (asked, answered, or minted here
        before a restart)."""
        return (
            handle in self.pending
            or handle in self.agent.state.resolutions
            or self.handles.minted_here(handle)
        )

    async def ask(self, card: InteractionCard, task_id: str | None) -> str:
        """Send ``card`` (the hub validates and stores it); returns its id, the handle."""
        card = card.model_copy(update={"id": card.id or self.handles.mint()})
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
        settled = self.settled(handle)
        if settled is not None:
            return settled
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

    async def outcome(self, handle: str) -> Resolution | Cancelled:
        """The outcome of ``handle``, however long it takes (a task's watcher waits so)."""
        settled = self.settled(handle)
        if settled is not None:
            return settled
        return await asyncio.shield(self._future(handle))

    async def wait_all(
        self, handles: list[str], wait_s: float, tick: Tick
    ) -> dict[str, Resolution | Cancelled | None]:
        """The outcome of each of ``handles``, waiting up to ``wait_s`` seconds in all for
        those without one yet (None for each still open then)."""
        outcomes = {h: self.settled(h) for h in handles}
        open_futures = {self._future(h): h for h, o in outcomes.items() if o is None}
        started = time.monotonic()
        while open_futures:
            left = wait_s - (time.monotonic() - started)
            if left <= 0:
                break
            # asyncio.wait leaves the futures alone when it times out (no shield needed).
            done, _ = await asyncio.wait(open_futures, timeout=min(left, self.progress_every_s))
            for future in list(open_futures):
                if future.done():
                    outcomes[open_futures.pop(future)] = future.result()
            if not done and open_futures:
                await tick(min(time.monotonic() - started, wait_s), wait_s)
        return outcomes

    def settled(self, handle: str) -> Resolution | Cancelled | None:
        """The outcome of ``handle`` if it has one: what this process saw settle it (an
        answer at the terminal included), else an answer the SDK kept across restarts."""
        future = self._answers.get(handle)
        if future is not None and future.done():
            return future.result()
        return self.known(handle)

    async def answer_in_terminal(self, handle: str, response: dict[str, Any], note: str) -> bool:
        """Record ``response``, given at the agent's terminal, as the answer to ``handle``:
        the card is withdrawn in the hub ("answered in the terminal", ``note`` beside it).
        False when the hub had an answer first; that answer then settles the wait."""
        if not await self._take_back(handle, "answered_in_terminal", note):
            return False
        self._settle(handle, Resolution(handle, response, TERMINAL, datetime.now(UTC), TERMINAL))
        return True

    async def withdraw(self, handle: str, note: str) -> bool:
        """Take ``handle``'s card back, no longer needed; its outcome is then "withdrawn".
        False when it had an outcome already, which stands."""
        if not await self._take_back(handle, "no_longer_needed", note):
            return False
        withdrawn = Resolution(
            handle,
            {},
            "",
            datetime.now(UTC),
            "",
            withdrawn=True,
            withdrawal_reason="no_longer_needed",
        )
        self._settle(handle, withdrawn)
        return True

    async def _take_back(self, handle: str, reason: WithdrawalReason, note: str) -> bool:
        if self.settled(handle) is not None:
            return False
        try:
            await self.agent.withdraw_interaction(handle, reason=reason, note=note[:500])
        except HubRefused as error:
            if error.code in _CLOSED:
                return False  # answered, expired or cancelled first: that outcome stands
            raise
        return True

    def _future(self, handle: str) -> asyncio.Future[Resolution | Cancelled]:
        future = self._answers.get(handle)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._answers[handle] = future
        return future

    async def _resolved(self, downlink: Downlink) -> None:
        answer = Resolution.from_payload(downlink.payload)
        self._settle(answer.interaction_id, answer)

    def _settle(self, handle: str, answer: Resolution | Cancelled) -> None:
        self.pending.pop(handle, None)
        future = self._future(handle)
        if not future.done():
            future.set_result(answer)
        # Outcomes are kept for a later get_decision; the oldest go first, as the SDK's do.
        while len(self._answers) > KEPT_OUTCOMES:
            oldest = next((h for h, f in self._answers.items() if f.done()), None)
            if oldest is None:
                break
            del self._answers[oldest]

    async def _task_cancelled(self, downlink: Downlink) -> None:
        task_id = str(downlink.payload.get("taskId") or "")
        reason = str(downlink.payload.get("reason") or "")
        for handle, asked in list(self.pending.items()):
            if asked.task_id and asked.task_id == task_id:
                self._settle(handle, Cancelled(handle, task_id, reason))


def outcome_result(outcome: Resolution | Cancelled) -> Decision:
    """What an asking tool returns once ``handle`` has an outcome of any kind."""
    if isinstance(outcome, Cancelled):
        return cancelled_result(outcome)
    if outcome.expired:
        return {
            "status": "expired",
            "handle": outcome.interaction_id,
            "reason": "expired",
            "next": "The card's time ran out and nobody decided: nothing was approved. Do "
            "not act on it; ask again if it is still needed.",
        }
    if outcome.withdrawn:
        return {
            "status": "withdrawn",
            "handle": outcome.interaction_id,
            "reason": outcome.withdrawal_reason,
            "next": "This request was taken back before anyone answered it in the hub; "
            "nothing was approved there.",
        }
    return decision_result(outcome)


def decision_result(answer: Resolution) -> Decision:
    """What an asking tool returns once a person answered: the answer, who, via what, when."""
    result: Decision = {
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
    if answer.votes:  # a quorum: every approver's vote, as the hub counted them
        result["votes"] = answer.votes  # type: ignore[typeddict-item]
    if answer.action is not None:  # the exact action decided on, bound by its hash
        result["action"] = answer.action  # type: ignore[typeddict-item]
        result["actionHash"] = answer.action_hash or ""
        if answer.edited_from:
            result["editedFrom"] = answer.edited_from
    return result


def cancelled_result(cancelled: Cancelled) -> Decision:
    return {
        "status": "cancelled",
        "handle": cancelled.handle,
        "taskId": cancelled.task_id,
        "reason": cancelled.reason,
        "next": "The person cancelled this task, so the request takes no answer. Stop the "
        "task's work; do not do what you asked about.",
    }


def pending_result(handle: str, waited_s: float) -> Decision:
    return {
        "status": "pending",
        "handle": handle,
        "waitedSeconds": round(waited_s),
        "next": "Nobody has answered yet; the request stays open on the person's surfaces. "
        "Call get_decision with this handle to wait again or collect the answer later.",
    }
