"""One-time pairing codes (spec §7.1): created here, redeemed by an agent connector.

A code is valid for ``pairing_code_ttl_s`` (10 minutes by default), works once, and is
stored only as a keyed hash.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hub.core.ids import new_id
from hub.core.people.credentials import hash_pairing_code, new_pairing_code
from hub.core.store.models import PairingCode, User


async def create_pairing_code(
    workspace_id: str, *, secret_key: str, ttl_s: float, created_by: User | None = None
) -> tuple[str, datetime]:
    """Returns the code (shown once) and when it expires."""
    code = new_pairing_code()
    expires_at = datetime.now(UTC) + timedelta(seconds=ttl_s)
    await PairingCode.create(
        id=new_id("pairing_code"),
        workspace_id=workspace_id,
        created_by=created_by,
        code_hash=hash_pairing_code(code, secret_key),
        expires_at=expires_at,
    )
    return code, expires_at
