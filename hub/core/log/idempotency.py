"""Envelope ids for writes a person's client may safely repeat (spec §11).

A client sends the same ``Idempotency-Key`` when it retries a request; the service turns it
into the envelope id of the event(s) it appends, so ``append_event`` recognises the repeat
and returns the first result instead of acting twice. The key is hashed together with the
caller and the purpose: two people (or one request's two events) never share an envelope id,
and whatever a client sends fits the log's id column.
"""

from __future__ import annotations

import hashlib

MAX_KEY_LENGTH = 200


def envelope_id_for(key: str | None, *, actor: str, purpose: str) -> str | None:
    """The envelope id for ``purpose`` of the request ``key`` by ``actor``; None without a key."""
    if key is None:
        return None
    digest = hashlib.sha256(f"{actor}\x00{purpose}\x00{key}".encode()).hexdigest()
    return f"req_{digest[:40]}"
