"""A stored event as the outside sees it: the LAP/0.1 envelope, and the bus's message.

Agents (LAP), browsers (``/ws/client``), the events API and the relay between hub
processes all read the same envelope of a stored event, so it is built in one place.
"""

from __future__ import annotations

from typing import Any

from hub.core.log.bus import PublishedEvent
from hub.core.store.models import Event
from hub.protocol.clock import wire_time
from hub.protocol.lap import PROTOCOL_VERSION


def to_envelope(event: Event) -> dict[str, Any]:
    """The LAP/0.1 envelope (spec §10) of a stored event."""
    envelope: dict[str, Any] = {
        "id": event.id,
        "type": event.type,
        "version": PROTOCOL_VERSION,
        "occurredAt": wire_time(event.occurred_at),
        "recordedAt": wire_time(event.recorded_at),
        "workspaceId": event.workspace_id,
        "sequence": int(event.sequence),
        "actor": event.actor,
        "payload": event.payload,
    }
    for key, value in (
        ("conversationId", event.conversation_id),
        ("taskId", event.task_id),
        ("correlationId", event.correlation_id),
    ):
        if value is not None:
            envelope[key] = value
    return envelope


def to_published(event: Event) -> PublishedEvent:
    addressee = event.recipient_agent_id
    if event.type == "agent.revoked":  # the revoked agent's socket must hear of it
        addressee = event.payload.get("agentId")
    return PublishedEvent(
        workspace_id=event.workspace_id,
        sequence=int(event.sequence),
        type=event.type,
        recipient_agent_id=event.recipient_agent_id,
        envelope=to_envelope(event),
        addressee=addressee,
    )


__all__ = ["to_envelope", "to_published"]
