"""Linking your accounts on outside surfaces (Telegram) to your hub account."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app

from hub.channels.runtime import EXTENSION
from hub.core.channel_accounts import create_link_token, linked_accounts
from hub.core.errors import Conflict
from hub.core.views import iso
from hub.web.identity import current_caller

blueprint = Blueprint("api_channel_links", __name__, url_prefix="/api/v1")


@blueprint.post("/me/channels/telegram/link")
async def link_telegram() -> tuple[dict[str, Any], int]:
    """A one-time deep link (15 minutes): opening it sends ``/start <token>`` to the bot,
    which links the sender's Telegram account to you."""
    caller = await current_caller()
    runtime = current_app.extensions.get(EXTENSION)
    # Duck-typed so that a hub installed without the telegram extra still serves the API.
    channel = runtime.channels.get("telegram") if runtime is not None else None
    if channel is None or not hasattr(channel, "deep_link"):
        raise Conflict(
            "Telegram is not set up on this hub.",
            code="telegram_not_configured",
            hint="Set LINEUP_TELEGRAM_BOT_TOKEN (and LINEUP_TELEGRAM_API_URL for a local Bot "
            "API server), then restart the hub.",
        )
    token, expires_at = await create_link_token(caller.user.id, "telegram")
    return {
        "token": token,
        "url": await channel.deep_link(token),
        "expiresAt": iso(expires_at),
    }, 201


@blueprint.get("/me/channels")
async def channels() -> dict[str, Any]:
    """The outside accounts you linked."""
    caller = await current_caller()
    return {"channels": await linked_accounts(caller.user.id)}
