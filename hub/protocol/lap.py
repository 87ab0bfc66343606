"""LAP/0.1, the agent protocol (spec §10): the envelope and each frame type's payload.

Shared by the hub's gateway and the Python SDK, so it depends on pydantic alone.

Every frame is a JSON text frame holding one ``Envelope``. Uplink frames (agent → hub) are
answered with ``ack`` or ``error`` carrying the uplink's ``id``. Downlink frames that come
from the log carry the log's ``sequence``; the agent remembers the highest one it handled
and sends it back as ``lastSequence`` (with the log's ``epoch``) in its next ``agent.hello``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from hub.protocol.base import WireModel
from hub.protocol.clock import utcnow
from hub.protocol.interactions import InteractionCard

PROTOCOL_VERSION = "0.1"
ENDPOINT_PATH = "/lap/v0.1"
MAX_FRAME_BYTES = 1_000_000

Id = Annotated[str, StringConstraints(min_length=1, max_length=100)]
ObjectId = Annotated[str, StringConstraints(min_length=1, max_length=40, pattern=r"^[\w-]+$")]


class Envelope(WireModel):
    id: Id
    type: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    version: Literal["0.1"] = "0.1"
    occurred_at: datetime = Field(default_factory=utcnow)
    workspace_id: str | None = None
    conversation_id: ObjectId | None = None
    task_id: ObjectId | None = None
    sequence: int | None = None
    correlation_id: Id | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


# --- agent → hub (§10.2) ------------------------------------------------------------------


class AgentHello(WireModel):
    agent_version: str = Field("", max_length=100)
    runtime: str = Field("", max_length=100)
    capabilities: list[Annotated[str, StringConstraints(max_length=100)]] = Field(
        default_factory=list, max_length=100
    )
    last_sequence: int | None = Field(None, ge=0)
    epoch: str | None = Field(None, max_length=40)
    # Only when pairing: the one-time code and the name the agent proposes for itself.
    pairing_code: str | None = Field(None, max_length=40)
    name: str | None = Field(None, min_length=1, max_length=200)


class AgentHeartbeat(WireModel):
    pass


class Attachment(WireModel):
    name: str = Field(min_length=1, max_length=500)
    url: str = Field(min_length=1, max_length=2000)
    mime_type: str | None = Field(None, max_length=200)


class MessageCreate(WireModel):
    """A whole message; after streaming, the final text under the streamed ``messageId``."""

    content: str = Field(max_length=200_000)
    blocks: list[dict[str, Any]] | None = Field(None, max_length=100)
    message_id: ObjectId | None = None
    conversation_id: ObjectId | None = None
    task_id: ObjectId | None = None  # the task the message reports on, if any
    attachments: list[Attachment] = Field(default_factory=list, max_length=50)


class MessageDelta(WireModel):
    """A piece of a message still being written; shown live, not stored as it comes."""

    message_id: ObjectId
    conversation_id: ObjectId | None = None
    delta: str = Field(max_length=100_000)


class TaskAccepted(WireModel):
    task_id: ObjectId | None = None


class TaskStatusChanged(WireModel):
    task_id: ObjectId | None = None
    status: Literal["queued", "running", "waiting_for_human", "succeeded", "failed", "cancelled"]
    progress: int | None = Field(None, ge=0, le=100)
    summary: str | None = Field(None, max_length=2000)
    error: str | None = Field(None, max_length=10_000)


class TaskCreated(WireModel):
    """A task the agent starts on its own (say, work an MCP client began in a terminal).

    The hub assigns it to the sending agent, which then reports on it as on any other task.
    """

    title: str = Field(min_length=1, max_length=500)
    description: str = Field("", max_length=10_000)
    task_id: ObjectId | None = None
    conversation_id: ObjectId | None = None


class TaskChildCreated(WireModel):
    parent_task_id: ObjectId
    title: str = Field(min_length=1, max_length=500)
    status: Literal[
        "queued", "running", "waiting_for_human", "succeeded", "failed", "cancelled"
    ] = "queued"
    task_id: ObjectId | None = None
    description: str = Field("", max_length=10_000)


class InteractionRequested(WireModel):
    interaction: InteractionCard
    task_id: ObjectId | None = None  # or the envelope's taskId


# Why an agent takes back a card it asked (``interaction.withdrawn``).
WithdrawalReason = Literal["answered_in_terminal", "no_longer_needed"]
WITHDRAWAL_REASONS: tuple[WithdrawalReason, ...] = ("answered_in_terminal", "no_longer_needed")
MAX_WITHDRAWAL_NOTE = 500


class InteractionWithdrawn(WireModel):
    """The agent takes back a card it asked that no person has answered yet: the question
    was answered elsewhere (its own terminal dialog, when a coding agent asks both there and
    in the hub) or is no longer needed. The card then takes no answer on any surface.

    ``note`` is the agent's own words, shown to people as plain text."""

    interaction_id: ObjectId
    reason: WithdrawalReason = "no_longer_needed"
    note: str = Field("", max_length=MAX_WITHDRAWAL_NOTE)


class ArtifactCreated(WireModel):
    name: str = Field(min_length=1, max_length=500)
    url: str = Field(min_length=1, max_length=2000)
    mime_type: str | None = Field(None, max_length=200)
    summary: str | None = Field(None, max_length=2000)
    task_id: ObjectId | None = None
    artifact_id: ObjectId | None = None


UPLINK_PAYLOADS: dict[str, type[WireModel]] = {
    "agent.hello": AgentHello,
    "agent.heartbeat": AgentHeartbeat,
    "message.create": MessageCreate,
    "message.delta": MessageDelta,
    "task.accepted": TaskAccepted,
    "task.status_changed": TaskStatusChanged,
    "task.created": TaskCreated,
    "task.child_created": TaskChildCreated,
    "interaction.requested": InteractionRequested,
    "interaction.withdrawn": InteractionWithdrawn,
    "artifact.created": ArtifactCreated,
}


# --- hub → agent (§10.3 and the frames the gateway adds) ----------------------------------


class AgentPaired(WireModel):
    agent_id: str
    workspace_id: str
    credential: str  # shown this once; the hub keeps only its hash


class AgentWelcome(WireModel):
    agent_id: str
    workspace_id: str
    heartbeat_interval_s: float
    epoch: str
    last_sequence: int  # the highest sequence of this workspace's log right now
    status: str


class Ack(WireModel):
    id: str
    sequence: int | None = None
    duplicate: bool = False
    # The id the hub gave an object whose uplink left it out (docs/protocol.md, "ack").
    message_id: str | None = None
    task_id: str | None = None
    interaction_id: str | None = None
    artifact_id: str | None = None


class ErrorFrame(WireModel):
    id: str | None = None
    code: str
    message: str
    hint: str


class CompatibilityWarning(WireModel):
    id: str | None = None
    code: str
    message: str


class TaskAssigned(WireModel):
    task: dict[str, Any]


class MessageDelivered(WireModel):
    message: dict[str, Any]


class InteractionResolved(WireModel):
    """A person's answer. When the card proposed an ``action``, ``response`` is bound to it:
    ``actionHash`` (of the final action), ``action`` (``{kind, fields}``, the final action)
    and, only when the person edited it, ``editedFrom`` (the hash of the proposed one)."""

    interaction_id: str
    response: dict[str, Any]
    responded_by: str
    responded_at: datetime
    via: str


class InteractionExpired(WireModel):
    """A card's time ran out with nothing decided (its policy's expiry default was to let
    it expire): the agent must not act on it, and may ask again."""

    interaction_id: str
    reason: str = ""
    expired_at: datetime


class TaskCancelRequested(WireModel):
    task_id: str
    reason: str = ""


class ResyncRequired(WireModel):
    reason: str
    last_sequence: int


DOWNLINK_PAYLOADS: dict[str, type[WireModel]] = {
    "agent.paired": AgentPaired,
    "agent.welcome": AgentWelcome,
    "ack": Ack,
    "error": ErrorFrame,
    "warning": CompatibilityWarning,
    "task.assigned": TaskAssigned,
    "message.delivered": MessageDelivered,
    "interaction.resolved": InteractionResolved,
    "interaction.expired": InteractionExpired,
    "task.cancel_requested": TaskCancelRequested,
    "system.resync_required": ResyncRequired,
}

# How log events addressed to an agent are named on the wire.
DOWNLINK_TYPE_OF_EVENT = {
    "task.created": "task.assigned",
    "message.created": "message.delivered",
    "interaction.resolved": "interaction.resolved",
    "interaction.expired": "interaction.expired",
    "task.cancel_requested": "task.cancel_requested",
}
