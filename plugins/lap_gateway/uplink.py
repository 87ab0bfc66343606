"""What an agent's uplink frames do: each becomes one event in the log, or a live delta.

The envelope id is the idempotency key: a frame resent after a reconnect returns the first
event's sequence with ``duplicate: true`` and changes nothing. Ids the agent leaves out
(``messageId``, a child's ``taskId``, the card's ``id``, ``artifactId``) are generated here;
the ``ack`` names them, so a raw client learns the id it may refer to later.

``message.delta`` (text still being written) is not logged: it is published on the bus as
a transient frame with sequence 0, which live readers pass on as it comes and never replay.
The final ``message.create`` under the same ``messageId`` stores the whole text.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from hub.core.errors import Forbidden, InvalidInput
from hub.core.ids import new_id
from hub.core.log.bus import DEFAULT_BUS, EventBus, PublishedEvent
from hub.core.log.events import AppendResult, queue_append
from hub.core.store.models import Agent
from hub.protocol.base import WireModel
from hub.protocol.clock import wire_time
from hub.protocol.lap import (
    PROTOCOL_VERSION,
    ArtifactCreated,
    Envelope,
    InteractionRequested,
    InteractionWithdrawn,
    MessageCreate,
    MessageDelta,
    TaskChildCreated,
    TaskCreated,
)
from plugins.lap_gateway.chain import then

# Uplink type → the log event type it appends.
EVENT_TYPE_OF_UPLINK = {
    "message.create": "message.created",
    "task.created": "task.created",
    "task.accepted": "task.accepted",
    "task.status_changed": "task.status_changed",
    "task.child_created": "task.child_created",
    "interaction.requested": "interaction.requested",
    "interaction.withdrawn": "interaction.withdrawn",
    "artifact.created": "artifact.created",
}

# The id an ack reports for each logged type, read back from the stored event's payload.
_CREATED_ID = {
    "task.created": "taskId",
    "message.created": "messageId",
    "task.child_created": "taskId",
    "artifact.created": "artifactId",
}


def check_workspace(agent: Agent, envelope: Envelope) -> None:
    """Spec §11: a credential is scoped to one workspace; naming another is refused."""
    if envelope.workspace_id is not None and envelope.workspace_id != agent.workspace_id:
        raise Forbidden(
            f"This agent belongs to workspace {agent.workspace_id}, not {envelope.workspace_id}.",
            code="workspace_mismatch",
            hint="Leave workspaceId out (the credential decides it) or send the agent's own.",
        )


def queue_uplink(
    agent: Agent, envelope: Envelope, payload: WireModel
) -> asyncio.Future[dict[str, Any]]:
    """Queue the event for a logged uplink type now; the returned future gives the ``ack``
    payload once the event is durable (cancelling it stops only the waiting: the write goes
    on). Queued in the order the frames came, so an agent's events keep its order however
    many are in flight."""
    event_type = EVENT_TYPE_OF_UPLINK[envelope.type]
    body, task_id, conversation_id = _event_payload(envelope, payload)
    if isinstance(payload, TaskCreated):
        body["targetAgentId"] = agent.id  # an agent starts tasks for itself only
    stored = queue_append(
        agent.workspace_id,
        event_type,
        body,
        actor=f"agent:{agent.id}",
        envelope_id=envelope.id,
        occurred_at=envelope.occurred_at,  # without a zone: UTC (queue_append)
        conversation_id=conversation_id,
        task_id=task_id,
        correlation_id=envelope.correlation_id,
    )
    return then(stored, lambda result: _ack(envelope.id, event_type, result))


def _ack(envelope_id: str, event_type: str, result: AppendResult) -> dict[str, Any]:
    ack: dict[str, Any] = {
        "id": envelope_id,
        "sequence": result.sequence,
        "duplicate": result.duplicate,
    }
    payload = result.event.payload
    if event_type == "interaction.requested":
        ack["interactionId"] = (payload.get("interaction") or {}).get("id")
    elif event_type == "interaction.withdrawn":
        ack["interactionId"] = payload.get("interactionId")
    elif event_type in _CREATED_ID:
        ack[_CREATED_ID[event_type]] = payload.get(_CREATED_ID[event_type])
    return ack


def _event_payload(
    envelope: Envelope, payload: WireModel
) -> tuple[dict[str, Any], str | None, str | None]:
    """The event's payload, task id and conversation id, with missing ids filled in."""
    body: dict[str, Any] = payload.wire()
    task_id: str | None = body.get("taskId") or envelope.task_id
    conversation_id = envelope.conversation_id
    if isinstance(payload, MessageCreate):
        # Without a conversation, a message about a task goes to the task's (see the
        # projection, which gives a task without one its own).
        conversation_id = payload.conversation_id or envelope.conversation_id
        if conversation_id is None and task_id is None:
            raise InvalidInput(
                "message.create needs a conversation or a task.",
                code="conversation_required",
                hint="Set conversationId, or taskId for a message about a task, in the "
                "payload or the envelope.",
            )
        if conversation_id is not None:
            body["conversationId"] = conversation_id
        _fill(body, "messageId", "message")
    elif isinstance(payload, TaskChildCreated | TaskCreated):
        _fill(body, "taskId", "task")
        task_id = body["taskId"]
        if isinstance(payload, TaskCreated):
            conversation_id = payload.conversation_id or envelope.conversation_id
    elif isinstance(payload, InteractionRequested):
        card: dict[str, Any] = body["interaction"]
        _fill(card, "id", "interaction")
        task_id = envelope.task_id or body.get("taskId")
    elif isinstance(payload, ArtifactCreated):
        _fill(body, "artifactId", "artifact")
    elif isinstance(payload, InteractionWithdrawn):
        # The card decides the task and conversation the event is about (the projection
        # stamps them); a task the envelope names is not copied into the payload.
        return body, task_id, conversation_id
    if envelope.type in ("task.accepted", "task.status_changed"):
        if not task_id:
            raise InvalidInput(
                f"{envelope.type} needs the task it is about.",
                code="task_required",
                hint="Set taskId in the payload or the envelope.",
            )
        body["taskId"] = task_id
    elif task_id and not isinstance(payload, TaskChildCreated):
        body.setdefault("taskId", task_id)
    return body, task_id, conversation_id


def _fill(body: dict[str, Any], key: str, kind: str) -> None:
    """A new id for ``key`` unless the agent chose one (``setdefault`` would make one, at
    about 5 µs, for every frame)."""
    if key not in body:
        body[key] = new_id(kind)


def _aware(moment: datetime) -> datetime:
    """A time the sender gave without a zone is read as UTC, as the envelope requires."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def publish_delta(
    agent: Agent, envelope: Envelope, delta: MessageDelta, bus: EventBus | None = None
) -> None:
    """Show streaming text live; nothing is stored until the final ``message.create``."""
    conversation_id = delta.conversation_id or envelope.conversation_id
    frame: dict[str, Any] = {
        "id": envelope.id,
        "type": "message.delta",
        "version": PROTOCOL_VERSION,
        "occurredAt": wire_time(_aware(envelope.occurred_at)),
        "workspaceId": agent.workspace_id,
        "sequence": 0,
        "actor": f"agent:{agent.id}",
        "payload": {**delta.wire(), "conversationId": conversation_id},
    }
    if conversation_id is not None:
        frame["conversationId"] = conversation_id
    if envelope.task_id is not None:
        frame["taskId"] = envelope.task_id
    (bus or DEFAULT_BUS).publish(
        PublishedEvent(
            workspace_id=agent.workspace_id,
            sequence=0,
            type="message.delta",
            recipient_agent_id=None,
            envelope=frame,
        )
    )
