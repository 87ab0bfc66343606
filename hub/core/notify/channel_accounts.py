"""A person's accounts on outside surfaces (a Telegram user), and how they get linked.

Linking is a one-time token: the person asks for it while signed in (Settings, or
``POST /api/v1/me/channels/telegram/link``), opens the surface's deep link, and the surface
hands the token back with the sender's identity (``redeem_link_token``). Only the token's
hash is stored; it works once, for ``LINK_TOKEN_TTL_S``.

An outside identity belongs to one person; linking it again moves it (the newer proof
wins), and a person has at most one account per surface.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from hub.core.errors import Gone, NotFound
from hub.core.ids import new_id
from hub.core.people.credentials import hash_token
from hub.core.store.notification_models import ChannelAccount, ChannelLinkToken
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import utcnow

LINK_TOKEN_TTL_S = 15 * 60


async def create_link_token(user_id: str, surface: str) -> tuple[str, datetime]:
    """A fresh one-time token for ``user_id`` to link their ``surface`` account.

    The token fits a Telegram deep link (``/start <token>``: 1–64 of ``A-Za-z0-9_-``).
    """
    token = secrets.token_urlsafe(24)
    expires_at = utcnow() + timedelta(seconds=LINK_TOKEN_TTL_S)
    await ChannelLinkToken.create(
        id=new_id("channel_link_token"),
        user_id=user_id,
        surface=surface,
        token_hash=hash_token(token),
        expires_at=expires_at,
    )
    return token, expires_at


async def redeem_link_token(
    surface: str, token: str, *, external_id: str, address: str, display_name: str = ""
) -> ChannelAccount:
    """Link the outside identity to the token's owner; raises ``Gone`` for a token that is
    unknown, used or expired (the three look the same to whoever holds it)."""
    now = utcnow()
    async with in_transaction() as connection:
        claimed = await (
            ChannelLinkToken.filter(
                token_hash=hash_token(token), surface=surface, used_at=None, expires_at__gt=now
            )
            .using_db(connection)
            .update(used_at=now)
        )
        if not claimed:
            raise Gone(
                "This link is invalid, used or expired.",
                code="link_token_invalid",
                hint="Create a new link in Settings and open it within 15 minutes.",
            )
        link = (
            await ChannelLinkToken.filter(token_hash=hash_token(token)).using_db(connection).get()
        )
        await (
            ChannelAccount.filter(surface=surface, external_id=external_id)
            .using_db(connection)
            .delete()
        )
        await (
            ChannelAccount.filter(surface=surface, user_id=link.user_id)
            .using_db(connection)
            .delete()
        )
        return await ChannelAccount.create(
            using_db=connection,
            id=new_id("channel_account"),
            user_id=link.user_id,
            surface=surface,
            external_id=external_id,
            address=address,
            display_name=display_name[:200],
            linked_at=now,
        )


async def account_for_identity(surface: str, external_id: str) -> ChannelAccount | None:
    return await ChannelAccount.filter(surface=surface, external_id=external_id).first()


async def unlink(user_id: str, surface: str) -> None:
    deleted = await ChannelAccount.filter(user_id=user_id, surface=surface).delete()
    if not deleted:
        raise NotFound(f"No {surface} account is linked.", code="channel_not_linked")


async def linked_surfaces(user_id: str, connection: Any = None) -> set[str]:
    """The surfaces on which the person linked an account (``telegram``, ...); inside a
    transaction, read through its ``connection``."""
    query = ChannelAccount.filter(user_id=user_id)
    if connection is not None:
        query = query.using_db(connection)
    return {str(surface) for surface in await query.values_list("surface", flat=True)}


async def linked_accounts(user_id: str) -> list[dict[str, Any]]:
    """For the Settings page: which surfaces the person linked, as whom, since when."""
    rows = await ChannelAccount.filter(user_id=user_id).order_by("surface")
    return [
        {
            "surface": row.surface,
            "displayName": row.display_name,
            "linkedAt": row.linked_at.isoformat(),
        }
        for row in rows
    ]


__all__ = [
    "LINK_TOKEN_TTL_S",
    "account_for_identity",
    "create_link_token",
    "linked_accounts",
    "linked_surfaces",
    "redeem_link_token",
    "unlink",
]
