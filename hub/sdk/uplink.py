"""The agent's side of the conversation: what it sends, and the answers it waits for.

``Uplink`` stamps envelopes, keeps each durable one in ``PendingUplinks`` (saved with the
agent's state) until the hub's ``ack`` or ``error`` settles it, and sends it at once while
the connection is live. After a reconnect it resends what was never acknowledged, in its
original order and with its original ids, before anything new goes out: the hub stores an
id once, so nothing is recorded twice. ``ask`` sends a card and waits for the person's
answer, which may arrive long after the ``ack``, across disconnects.

``Task`` and the ``Dispatcher`` send through it; the ``Agent`` owns it and tells it what the
socket does (welcomed, lost) and what the hub answers.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Protocol

from hub.protocol.clock import utcnow
from hub.protocol.interactions import InteractionCard
from hub.protocol.lap import MAX_FRAME_BYTES, PROTOCOL_VERSION, Ack, InteractionWithdrawn
from hub.sdk.connection import Connection
from hub.sdk.errors import AgentClosed, HubRefused, TaskCancelled
from hub.sdk.ids import new_id
from hub.sdk.pending import Envelope, PendingUplinks
from hub.sdk.resolution import Resolution

KnownAnswer = Callable[[str], dict[str, Any] | None]
KeepAnswer = Callable[[str, dict[str, Any]], None]


class Cancellable(Protocol):
    """What ``ask`` watches of a task, so a cancel request ends the wait for an answer."""

    id: str
    cancellation: asyncio.Event
    cancel_reason: str


class Uplink:
    def __init__(
        self,
        connection: Connection,
        *,
        stored: list[Envelope],
        known_answer: KnownAnswer,
        persist: Callable[[], None],
        keep_answer: KeepAnswer | None = None,
    ) -> None:
        self.pending = PendingUplinks(stored)
        # Set once the connection is welcomed and the resend is done; until then new uplinks
        # only wait in ``pending``, so none overtakes an older one still to be resent.
        self.live = asyncio.Event()
        self._connection = connection
        self._known_answer = known_answer  # an answer saved earlier, by interaction id
        self._keep_answer = keep_answer  # save one (with the agent's state)
        self._persist = persist
        self._answers: dict[str, list[asyncio.Future[Resolution]]] = defaultdict(list)
        self._resend_task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    # --- sending --------------------------------------------------------------------------

    async def send(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        envelope_id: str,
        task_id: str | None,
        conversation_id: str | None,
    ) -> Ack:
        """Send once and resend until answered; the ``Ack``, or ``HubRefused`` if refused."""
        if self._closed:
            raise AgentClosed("the agent was closed")
        envelope = _envelope(envelope_id, kind, payload, task_id, conversation_id)
        _refuse_if_too_large(envelope)
        answer = self.pending.add(envelope)
        self._persist()
        if self.live.is_set():
            # A repeat of an id still waiting goes out as first kept, never as the new copy.
            await self._connection.send(self.pending.get(envelope_id) or envelope)
        return await answer

    async def send_unacknowledged(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        task_id: str | None,
        conversation_id: str | None,
    ) -> None:
        """Best effort, never resent (streaming deltas: the final message carries it all)."""
        if self.live.is_set():
            envelope = _envelope(new_id("evt"), kind, payload, task_id, conversation_id)
            _refuse_if_too_large(envelope)
            await self._connection.send(envelope)

    async def ask(
        self,
        card: InteractionCard,
        *,
        envelope_id: str,
        task_id: str | None,
        conversation_id: str | None,
        cancellation: Cancellable | None = None,
    ) -> Resolution:
        """Send ``card`` and wait for its answer (one saved earlier counts); with
        ``cancellation``, raise ``TaskCancelled`` if that task is cancelled first."""
        assert card.id is not None
        interaction_id = card.id
        answer: asyncio.Future[Resolution] = asyncio.get_running_loop().create_future()
        self._answers[interaction_id].append(answer)
        try:
            known = self._known_answer(interaction_id)
            if known is not None:
                return Resolution.from_payload(known)
            await self.send(
                "interaction.requested",
                {"interaction": card.wire()},
                envelope_id=envelope_id,
                task_id=task_id,
                conversation_id=conversation_id,
            )
            if cancellation is None:
                return await answer
            stop: asyncio.Future[Any] = asyncio.ensure_future(cancellation.cancellation.wait())
            try:
                either: set[asyncio.Future[Any]] = {answer, stop}
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
            if answer.done():
                return answer.result()
            raise TaskCancelled(cancellation.id, cancellation.cancel_reason)
        finally:
            waiting = self._answers.get(interaction_id, [])
            if answer in waiting:
                waiting.remove(answer)
            if not waiting:
                self._answers.pop(interaction_id, None)

    async def withdraw(
        self, withdrawal: InteractionWithdrawn, *, task_id: str | None = None
    ) -> Ack:
        """Take back a card this agent asked; once the hub has it, whoever waits for the
        card's answer here is given a ``Resolution`` marked ``withdrawn``.

        The envelope id is derived from the card, not from a step: a card is withdrawn
        once, so a withdrawal sent again after a restart is a duplicate wherever it comes.
        Raises ``HubRefused`` when the hub refuses it — ``already_decided`` when a person
        answered first (that answer then reaches the waiting caller as usual).
        """
        interaction_id = withdrawal.interaction_id
        ack = await self.send(
            "interaction.withdrawn",
            withdrawal.wire(),
            envelope_id=f"{interaction_id}.withdrawn",
            task_id=task_id,
            conversation_id=None,
        )
        kept = Resolution.withdrawal_payload(withdrawal, utcnow())
        if self._keep_answer is not None:
            self._keep_answer(interaction_id, kept)
        self.answered(Resolution.from_payload(kept))
        return ack

    # --- what the hub answers -------------------------------------------------------------

    def acknowledged(self, ack: Ack) -> None:
        if self.pending.acknowledged(ack):
            self._persist()

    def refused(self, envelope_id: str, error: HubRefused) -> bool:
        """Settle the uplink the hub refused; False if ``envelope_id`` is none of ours."""
        if not self.pending.refused(envelope_id, error):
            return False
        self._persist()
        return True

    def answered(self, resolution: Resolution) -> None:
        """Give a card's answer (already saved) to whoever waits for it."""
        for future in self._answers.get(resolution.interaction_id, []):
            if not future.done():
                future.set_result(resolution)

    # --- what the socket does -------------------------------------------------------------

    def resume(self) -> None:
        """The hub welcomed the agent: resend, then go live.

        Resend beside the reader, not inside it: the hub answers each resend while it
        replays, and a reader stuck sending would stop reading those answers.
        """
        self._resend_task = asyncio.create_task(self._resend(), name="lineup-resend")

    def suspend(self) -> None:
        """The socket is gone: new uplinks wait in ``pending`` for the next welcome."""
        self.live.clear()
        if self._resend_task is not None:
            self._resend_task.cancel()
            self._resend_task = None

    def forget(self) -> None:
        """Another identity: what the old one had not yet got acknowledged means nothing."""
        self.pending = PendingUplinks()

    def close(self) -> None:
        """Refuse new uplinks (``AgentClosed``); callers already waiting wait on."""
        self._closed = True
        self.live.clear()

    def abandon_waiters(self, error: Exception) -> None:
        """Wake every caller still waiting, with ``error``; the entries stay to be saved."""
        self.pending.abandon_waiters(error)
        for futures in self._answers.values():
            for future in futures:
                if not future.done():
                    future.set_exception(error)

    async def _resend(self) -> None:
        """Send what was never acknowledged, in its original order and with its original
        ids, before anything new; loop until nothing added meanwhile is left unsent."""
        sent: set[str] = set()
        while True:
            unsent = [e for e in self.pending.envelopes() if e["id"] not in sent]
            if not unsent:
                break
            for envelope in unsent:
                if not await self._connection.send(envelope):
                    return  # lost again; the next welcome resends
                sent.add(str(envelope["id"]))
        if self._connection.is_open:
            self.live.set()


def _refuse_if_too_large(envelope: Envelope) -> None:
    """Refuse, before it is kept, a frame the hub would not read: past ``MAX_FRAME_BYTES``
    characters it closes the socket (1009), and resending it would close every next one."""
    size = len(json.dumps(envelope))  # ASCII, as the connection sends it: bytes too
    if size > MAX_FRAME_BYTES:
        raise HubRefused(
            f"This uplink is {size} bytes; a frame may hold at most {MAX_FRAME_BYTES}.",
            code="frame_too_large",
            hint="Send less at once: split the content or link to it as an artifact.",
        )


def _envelope(
    envelope_id: str,
    kind: str,
    payload: dict[str, Any],
    task_id: str | None,
    conversation_id: str | None,
) -> Envelope:
    envelope: Envelope = {
        "id": envelope_id,
        "type": kind,
        "version": PROTOCOL_VERSION,
        "occurredAt": utcnow().isoformat().replace("+00:00", "Z"),
        "payload": payload,
    }
    if task_id:
        envelope["taskId"] = task_id
    if conversation_id:
        envelope["conversationId"] = conversation_id
    return envelope
