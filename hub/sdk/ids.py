"""Ids the adapter chooses: fresh ones, and ones derived from a task and a step.

A derived id is the same every time the same step of the same task runs, so a task handler
resumed after a crash re-sends what it sent before under the same ids and the hub stores
nothing twice (envelope ids are idempotency keys; card, child task, message and artifact
ids are unique in the hub).
"""

from __future__ import annotations

import hashlib
import uuid

# The hub's object ids are at most 40 characters of [A-Za-z0-9_-].
_DIGEST_LENGTH = 32


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def derived_id(prefix: str, key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()[:_DIGEST_LENGTH]
    return f"{prefix}_{digest}"
