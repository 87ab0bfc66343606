"""Reading an agent's frames and writing the hub's own (``ack``, ``error``, ``warning`` ...).

Reading checks, in order: a text frame, at most ``MAX_FRAME_BYTES``, JSON, an object, a
valid envelope, then the payload against its type's model. Each failure is a ``HubError``
with a stable code (``binary_frame``, ``frame_too_large``, ``malformed_json``,
``invalid_envelope``, ``invalid_payload``) carried in ``FrameRefused`` together with the
envelope id when one could be read, so the ``error`` frame can name the uplink it answers.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from hub.core.errors import HubError, InvalidInput, PayloadTooLarge
from hub.core.ids import new_id
from hub.core.text import NUL, refuse_nul_in_json
from hub.protocol.base import WireModel
from hub.protocol.clock import utcnow
from hub.protocol.lap import MAX_FRAME_BYTES, PROTOCOL_VERSION, UPLINK_PAYLOADS, Envelope

logger = logging.getLogger(__name__)

_UTF8_MAX_BYTES_PER_CHAR = 4


class FrameRefused(Exception):
    """An uplink frame the hub will not act on; answered with an ``error`` frame."""

    def __init__(self, error: HubError, envelope_id: str | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.envelope_id = envelope_id


def read_envelope(raw: str | bytes | None) -> Envelope:
    if raw is None:  # Quart hands over an empty frame (binary, and sometimes text) as None
        raise FrameRefused(
            InvalidInput(
                "An empty frame carries no envelope.",
                code="empty_frame",
                hint="Send each envelope as a JSON text frame.",
            )
        )
    if isinstance(raw, bytes):
        raise FrameRefused(
            InvalidInput(
                "Binary frames are not part of LAP/0.1.",
                code="binary_frame",
                hint="Send each envelope as a JSON text frame.",
            )
        )
    # Counting bytes costs a copy; only frames that might be too long pay it.
    too_long = len(raw) > MAX_FRAME_BYTES or (
        len(raw) * _UTF8_MAX_BYTES_PER_CHAR > MAX_FRAME_BYTES
        and len(raw.encode()) > MAX_FRAME_BYTES
    )
    if too_long:
        raise FrameRefused(
            PayloadTooLarge(
                f"A frame may hold at most {MAX_FRAME_BYTES} bytes.",
                code="frame_too_large",
            ),
            _id_of_oversized(raw),
        )
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise FrameRefused(
            InvalidInput(
                f"The frame is not JSON ({error.msg} at position {error.pos})."
                if isinstance(error, json.JSONDecodeError)
                else "The frame is not JSON.",
                code="malformed_json",
                hint="Send one JSON object, the LAP envelope, per text frame.",
            )
        ) from None
    if not isinstance(data, dict):
        raise FrameRefused(
            InvalidInput(
                "The frame must be a JSON object (the envelope).",
                code="invalid_envelope",
                hint="See docs/protocol.md for the envelope's fields.",
            )
        )
    claimed_id = data.get("id") if isinstance(data.get("id"), str) else None
    try:
        refuse_nul_in_json(raw, data, "frame")
    except InvalidInput as error:
        # Named in the error frame only if the id itself is clean, so the sender can settle it.
        usable_id = claimed_id if claimed_id and NUL not in claimed_id else None
        raise FrameRefused(error, usable_id) from None
    try:
        return Envelope.model_validate(data)
    except ValidationError as error:
        raise FrameRefused(
            InvalidInput(
                "The envelope is not valid: " + first_problem(error),
                code="invalid_envelope",
                hint="See docs/protocol.md for the envelope's fields and their types.",
            ),
            claimed_id,
        ) from None


def _id_of_oversized(raw: str) -> str | None:
    """The id of a frame refused as too long, so the sender can settle that uplink.

    The server caps a message at 16 MiB before it reaches us, so parsing it is bounded.
    """
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    envelope_id = data.get("id") if isinstance(data, dict) else None
    return envelope_id if isinstance(envelope_id, str) else None


def read_payload(envelope: Envelope) -> WireModel | None:
    """The payload validated against its type's model; ``None`` for an unknown type."""
    model = UPLINK_PAYLOADS.get(envelope.type)
    if model is None:
        return None
    try:
        payload = model.model_validate(envelope.payload)
    except ValidationError as error:
        raise FrameRefused(
            InvalidInput(
                f"The {envelope.type} payload is not valid: " + first_problem(error),
                code="invalid_payload",
                hint=f"See docs/protocol.md, '{envelope.type}', for the payload's fields.",
            ),
            envelope.id,
        ) from None
    return payload


def first_problem(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(p) for p in problem["loc"]) or "value"
    return f"{where}: {problem['msg']}"


def unknown_fields(envelope: Envelope, payload: WireModel | None) -> list[str]:
    names = list(envelope.unknown_fields)
    if payload is not None:
        names += [f"payload.{name}" for name in payload.unknown_fields]
    return names


def hub_frame(kind: str, payload: dict[str, Any], *, workspace_id: str | None = None) -> str:
    """A frame the hub originates (not a log event): its own id, no sequence."""
    frame: dict[str, Any] = {
        "id": new_id("event"),
        "type": kind,
        "version": PROTOCOL_VERSION,
        "occurredAt": utcnow().isoformat().replace("+00:00", "Z"),
        "payload": payload,
    }
    if workspace_id is not None:
        frame["workspaceId"] = workspace_id
    return json.dumps(frame)


def error_payload(error: HubError, envelope_id: str | None) -> dict[str, Any]:
    body = {"id": envelope_id, **error.to_dict()}
    return body


def close_reason(error: HubError) -> str:
    """The WebSocket close reason: the stable code as compact JSON (at most 123 bytes)."""
    return json.dumps({"code": error.code}, separators=(",", ":"))[:123]
