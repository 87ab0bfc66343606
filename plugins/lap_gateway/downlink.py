"""The events addressed to one agent, as LAP frames: replayed, then live, in order, once.

``AgentDownlink`` subscribes to the bus *before* its first read of the log, so an event
committed between the replay and going live cannot fall between them. The bus only wakes
it: every wake-up reads this agent's events after the last sequence sent from the log
(indexed by workspace, recipient, sequence). So frames leave in log order even when the bus
delivers two events out of order, nothing is sent twice (a sequence at or below the last
one sent is skipped), and a slow socket dropped by the bus just reads on from the log.
Events appended by another process reach the bus through the relay (PostgreSQL); any the
bus never carried send every reader back to the log within about a second
(``hub.core.log.watch``), and a downlink sent back so looks for its agent's revocation too.

One socket per agent: a later ``agent.connected`` of the agent, from any hub process, is
read here in log order like its other events, and ends this downlink before anything
after it is sent, so each event goes out on one socket.

An answer to a card (``interaction.resolved``) written on the socket is recorded as delivered
(``hub.core.work.deliveries``) before the next frame goes out.

Unlike ``hub.core.log.feed.WorkspaceFeed``, which follows every event of a workspace, this reads
only the agent's own: an agent back after a day replays its handful of events, not the
workspace's thousands.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from hub.core.errors import HubError
from hub.core.log.bus import EventBus, SubscriberDropped, Subscription
from hub.core.log.envelopes import to_envelope
from hub.core.log.events import downlink_after
from hub.core.store.models import Agent, AgentStatus, Event
from hub.core.work.deliveries import record_delivery
from hub.protocol.lap import DOWNLINK_PAYLOADS, DOWNLINK_TYPE_OF_EVENT

logger = logging.getLogger(__name__)

PAGE_SIZE = 500


def downlink_payload(event: Event) -> dict[str, Any]:
    """The payload of the frame an event becomes (spec §10.3)."""
    payload = dict(event.payload)
    recorded_at = to_envelope(event)["recordedAt"]
    if event.type == "task.created":
        task_id = payload.pop("taskId", None) or event.task_id
        return {"task": {"id": task_id, **payload, "createdBy": event.actor}}
    if event.type == "message.created":
        message_id = payload.pop("messageId", None)
        message = {"id": message_id, **payload, "author": event.actor, "createdAt": recorded_at}
        return {"message": message}
    if event.type == "interaction.resolved":
        return {**payload, "respondedAt": payload.get("respondedAt") or recorded_at}
    if event.type == "interaction.expired":
        return {**payload, "expiredAt": recorded_at}
    if event.type == "task.cancel_requested":
        return {**payload, "taskId": payload.get("taskId") or event.task_id}
    return payload


def downlink_frame(event: Event) -> str:
    envelope = to_envelope(event)
    wire_type = DOWNLINK_TYPE_OF_EVENT.get(event.type, event.type)
    payload = downlink_payload(event)
    model = DOWNLINK_PAYLOADS.get(wire_type)
    if model is not None:
        try:
            payload = model.model_validate(payload).wire()
        except ValidationError as error:
            # The log holds what it holds; the agent still gets it, and we learn of it.
            logger.error("downlink %s #%s off its model: %s", wire_type, event.sequence, error)
    envelope["type"] = wire_type
    envelope["payload"] = payload
    return json.dumps(envelope)


class AgentDownlink:
    """``session_id`` and ``connected_at`` name this socket's own ``agent.connected``: a
    later one of another socket means this one was replaced (``replaced``), and nothing
    after it is sent here."""

    def __init__(
        self,
        workspace_id: str,
        agent_id: str,
        *,
        bus: EventBus,
        send: Callable[[str], Awaitable[None]],
        session_id: str | None = None,
        connected_at: int = 0,
    ) -> None:
        self.workspace_id = workspace_id
        self.agent_id = agent_id
        self.session_id = session_id
        self.connected_at = connected_at
        self.replaced = False
        self.last_sent = 0
        self.sent = 0  # frames sent, replayed or live
        self._bus = bus
        self._send = send
        self._subscription: Subscription | None = None

    def subscribe(self) -> None:
        """Start listening; call before reading where to replay from."""
        if self._subscription is not None:
            self._subscription.close()
        self._subscription = self._bus.subscribe(self.workspace_id, addressee=self.agent_id)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    async def run(self, after: int) -> None:
        """Replay after ``after``, then follow; returns when the agent is revoked or this
        socket was replaced (``replaced``)."""
        if self._subscription is None:
            self.subscribe()
        self.last_sent = after
        await self._send_from_log()
        while not self.replaced:
            assert self._subscription is not None
            try:
                published = await self._subscription.get()
            except SubscriberDropped as dropped:
                if dropped.fell_behind:
                    logger.info("agent %s fell behind at %s", self.agent_id, self.last_sent)
                elif await Agent.filter(id=self.agent_id, status=AgentStatus.REVOKED).exists():
                    return  # revoked by a process this one did not hear from
                self.subscribe()
                await self._send_from_log()
                continue
            if published.type == "agent.revoked":
                return
            if published.sequence > self.last_sent:
                await self._send_from_log()

    async def _send_from_log(self) -> None:
        while True:
            page = await downlink_after(
                self.workspace_id, self.agent_id, self.last_sent, limit=PAGE_SIZE
            )
            for event in page:
                if self._its_own_task(event):
                    self.last_sent = int(event.sequence)
                    continue
                if event.type == "agent.connected":  # the hub's own, never a frame
                    if self._replaced_by(event):
                        self.replaced = True
                        return
                    self.last_sent = int(event.sequence)
                    continue
                await self._send(downlink_frame(event))
                self.last_sent = int(event.sequence)
                self.sent += 1
                if event.type == "interaction.resolved":
                    await self._delivered(event)
            if len(page) < PAGE_SIZE:
                return

    async def _delivered(self, resolved: Event) -> None:
        """The answer is on the agent's socket now: the card says so from here on."""
        try:
            await record_delivery(resolved)
        except HubError as error:  # the card is gone with its workspace, say; the frame went
            logger.info(
                "delivery of card %s not recorded: %s",
                resolved.payload.get("interactionId"),
                error.code,
            )

    def _its_own_task(self, event: Event) -> bool:
        """A task this agent opened for itself: logs written before the projection stopped
        addressing those to their agent still do, and one sent would start it again."""
        return event.type == "task.created" and event.actor == f"agent:{self.agent_id}"

    def _replaced_by(self, connected: Event) -> bool:
        return (
            self.session_id is not None
            and int(connected.sequence) > self.connected_at
            and connected.payload.get("sessionId") != self.session_id
        )
