"""What a person's client may send on ``/ws/client``: the user-side frames of spec §10.1.

``message.create``, ``task.create``, ``interaction.respond`` and ``task.cancel_requested``,
each a LAP envelope whose ``id`` is the idempotency key: sending the same id again (after a
reconnect, say) returns the first result and changes nothing. Every frame is answered on
the same socket with

* ``ack`` ``{id, sequence, duplicate, result}`` — the sequence of the event the frame
  logged (``task.create`` and tracked messages log two; this is the last), and the created
  or changed object as the JSON API shows it; or
* ``error`` ``{id, code, message, hint, details?}`` — the socket stays open. A second answer
  to a card gets ``already_decided`` with who decided, via what and when in ``details``.

The ack and the events a frame caused travel independently: either may arrive first.
Each frame goes through the same core services, limits and checks as the JSON API.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hub.core.errors import Forbidden, HubError, InvalidInput, PayloadTooLarge
from hub.core.log.idempotency import envelope_id_for
from hub.core.store.models import Event, Membership, Role
from hub.core.store.storage_faults import refused_value, storage_fault
from hub.core.text import refuse_nul_in_json
from hub.core.work.conversations import MAX_TITLE_LENGTH
from hub.core.work.interactions import interaction_detail, respond_to_interaction
from hub.core.work.messages import MAX_CONTENT_LENGTH, post_message
from hub.core.work.tasks import (
    MAX_DESCRIPTION_LENGTH,
    MAX_REASON_LENGTH,
    create_task,
    request_cancel,
)
from hub.core.work.views import task_view
from hub.host.identity import Caller
from hub.protocol.interactions import MAX_COMMENT_LENGTH, OptionId
from hub.protocol.lap import MAX_FRAME_BYTES, PROTOCOL_VERSION, Envelope
from hub.web.api.base import ApiModel

logger = logging.getLogger(__name__)


class MessageCreate(ApiModel):
    conversation_id: str | None = Field(None, max_length=40)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_LENGTH)
    target_agent_id: str | None = Field(None, max_length=40)
    track_as_task: bool = False
    task_title: str | None = Field(None, max_length=MAX_TITLE_LENGTH)


class TaskCreate(ApiModel):
    title: str = Field(min_length=1, max_length=MAX_TITLE_LENGTH)
    description: str = Field("", max_length=MAX_DESCRIPTION_LENGTH)
    target_agent_id: str = Field(min_length=1, max_length=40)
    conversation_id: str | None = Field(None, max_length=40)


class InteractionRespond(ApiModel):
    interaction_id: str = Field(min_length=1, max_length=40)
    response: dict[str, Any]
    via: str | None = Field(None, max_length=40)  # as the JSON API's respond body


class CancelRequested(ApiModel):
    task_id: str | None = Field(None, max_length=40)
    reason: str = Field("", max_length=MAX_REASON_LENGTH)


class _Answer(ApiModel):
    option_id: OptionId | None = None
    option_ids: list[OptionId] | None = Field(None, max_length=20)
    text: str | None = Field(None, max_length=100_000)
    comment: str | None = Field(None, max_length=MAX_COMMENT_LENGTH)
    # A card of an exact action is answered bound to it, as through the JSON API: the hash
    # of the action shown, and the person's edit of its editable fields.
    action_hash: str | None = Field(None, max_length=100)
    action: dict[str, Any] | None = None
    edited_from: str | None = Field(None, max_length=100)


@dataclass(frozen=True, slots=True)
class Command:
    caller: Caller
    membership: Membership
    envelope: Envelope

    @property
    def workspace_id(self) -> str:
        return self.membership.workspace_id

    @property
    def key(self) -> str:
        return self.envelope.id


Handler = Callable[[Command, Any], Awaitable[dict[str, Any]]]


async def _message_create(command: Command, body: MessageCreate) -> dict[str, Any]:
    conversation_id = body.conversation_id or command.envelope.conversation_id
    if conversation_id is None:
        raise InvalidInput("Say which conversation: set 'conversationId'.", code="invalid_payload")
    posted = await post_message(
        command.workspace_id,
        conversation_id,
        body.content,
        by=command.caller.actor,
        target_agent_id=body.target_agent_id,
        track_as_task=body.track_as_task,
        task_title=body.task_title,
        idempotency_key=command.key,
    )
    return posted.view()


async def _task_create(command: Command, body: TaskCreate) -> dict[str, Any]:
    task = await create_task(
        command.workspace_id,
        body.title,
        by=command.caller.actor,
        target_agent_id=body.target_agent_id,
        description=body.description,
        conversation_id=body.conversation_id or command.envelope.conversation_id,
        idempotency_key=command.key,
    )
    return task_view(task)


async def _respond(command: Command, body: InteractionRespond) -> dict[str, Any]:
    try:
        answer = _Answer.model_validate(body.response)
    except ValidationError as error:
        raise InvalidInput(_problem(error, "response"), code="invalid_payload") from None
    await respond_to_interaction(
        command.workspace_id,
        body.interaction_id,
        answer.model_dump(by_alias=True, exclude_none=True),
        responder=command.caller.actor,
        via=command.caller.answering_via(body.via),
        idempotency_key=command.key,
    )
    return await interaction_detail(command.workspace_id, body.interaction_id)


async def _cancel(command: Command, body: CancelRequested) -> dict[str, Any]:
    task_id = body.task_id or command.envelope.task_id
    if task_id is None:
        raise InvalidInput("Say which task: set 'taskId'.", code="invalid_payload")
    task = await request_cancel(
        command.workspace_id,
        task_id,
        by=command.caller.actor,
        reason=body.reason,
        idempotency_key=command.key,
    )
    return task_view(task)


@dataclass(frozen=True, slots=True)
class _Kind:
    model: type[BaseModel]
    handler: Handler
    # The purpose the service derives the envelope id of the frame's last event from (see
    # hub.core.log.idempotency): how the ack finds that event's sequence, and a repeat.
    purpose: Callable[[Any], str]


COMMANDS: dict[str, _Kind] = {
    "message.create": _Kind(MessageCreate, _message_create, lambda body: "message"),
    "task.create": _Kind(TaskCreate, _task_create, lambda body: "task"),
    "interaction.respond": _Kind(
        InteractionRespond, _respond, lambda body: f"respond:{body.interaction_id}"
    ),
    "task.cancel_requested": _Kind(CancelRequested, _cancel, lambda body: "cancel"),
}


async def handle_frame(raw: str | bytes, caller: Caller, membership: Membership) -> str:
    """The ``ack`` or ``error`` frame (JSON text) answering one frame from the client."""
    envelope_id: str | None = None
    try:
        envelope = _read(raw, membership.workspace_id)
        envelope_id = envelope.id
        kind = COMMANDS[envelope.type]
        try:
            body = kind.model.model_validate(envelope.payload)
        except ValidationError as error:
            raise InvalidInput(_problem(error, "payload"), code="invalid_payload") from None
        # Answers are refused by the core (``not_allowed_to_answer``), as on every surface.
        if membership.role == Role.VIEWER and envelope.type != "interaction.respond":
            raise Forbidden("Viewers of a workspace can look but not act.", code="read_only_member")
        command = Command(caller, membership, envelope)
        logged_before = await _logged_sequence(command, kind.purpose(body))
        result = await kind.handler(command, body)
        sequence = await _logged_sequence(command, kind.purpose(body))
    except HubError as error:
        return frame("error", membership.workspace_id, {"id": envelope_id, **error.to_dict()})
    except Exception as error:  # the socket must keep answering, as the API does
        failure: HubError | None = refused_value(error) or storage_fault(error)
        if failure is None:
            logger.exception("client frame %s failed", envelope_id)
            failure = HubError("Something went wrong on the hub.")
        return frame("error", membership.workspace_id, {"id": envelope_id, **failure.to_dict()})
    ack = {"id": envelope.id, "sequence": sequence, "duplicate": logged_before is not None}
    return frame("ack", membership.workspace_id, {**ack, "result": result})


async def _logged_sequence(command: Command, purpose: str) -> int | None:
    envelope_id = envelope_id_for(command.key, actor=command.caller.actor, purpose=purpose)
    event = await Event.filter(
        workspace_id=command.workspace_id, actor=command.caller.actor, id=envelope_id
    ).first()
    return int(event.sequence) if event is not None else None


def _read(raw: str | bytes, workspace_id: str) -> Envelope:
    if isinstance(raw, bytes):
        raise InvalidInput("Send JSON text frames.", code="binary_frame")
    if len(raw.encode()) > MAX_FRAME_BYTES:
        raise PayloadTooLarge(
            f"A frame may hold at most {MAX_FRAME_BYTES} bytes.", code="frame_too_large"
        )
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise InvalidInput(f"The frame is not JSON: {error}.", code="malformed_json") from None
    if not isinstance(data, dict):
        raise InvalidInput("A frame is a JSON object (an envelope).", code="invalid_envelope")
    refuse_nul_in_json(raw, data, "frame")
    try:
        envelope = Envelope.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(_problem(error, "envelope"), code="invalid_envelope") from None
    if envelope.workspace_id not in (None, workspace_id):
        raise Forbidden(
            "This socket belongs to another workspace.",
            code="workspace_mismatch",
            hint="Leave 'workspaceId' out, or open a socket for that workspace.",
        )
    if envelope.type not in COMMANDS:
        raise InvalidInput(
            f"{envelope.type!r} is not something a client sends.",
            code="unknown_type",
            hint="Send one of: " + ", ".join(COMMANDS) + ".",
        )
    return envelope


def _problem(error: ValidationError, what: str) -> str:
    problem = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in problem["loc"]) or what
    return f"The {what} is not valid — {where}: {problem['msg']}."


def frame(type: str, workspace_id: str, payload: dict[str, Any]) -> str:
    """A hub frame that is not a logged event: no id of its own, no sequence."""
    return json.dumps(
        {
            "type": type,
            "version": PROTOCOL_VERSION,
            "workspaceId": workspace_id,
            "payload": payload,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )
