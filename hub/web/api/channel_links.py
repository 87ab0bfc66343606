"""Linking your accounts on outside surfaces (Telegram, Slack) to your hub account."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app

from hub.channels.runtime import runtime_of
from hub.core.notify.channel_accounts import linked_accounts, unlink
from hub.host.identity import current_caller

blueprint = Blueprint("api_channel_links", __name__, url_prefix="/api/v1")


@blueprint.post("/me/channels/telegram/link")
async def link_telegram() -> tuple[dict[str, Any], int]:
    """A one-time deep link (15 minutes): opening it sends ``/start <token>`` to the bot,
    which links the sender's Telegram account to you."""
    caller = await current_caller()
    return await runtime_of(current_app).link_account(caller.user.id, "telegram"), 201


@blueprint.delete("/me/channels/telegram")
async def unlink_telegram() -> tuple[str, int]:
    """Unlink your Telegram account: cards stop going to its chat. 404
    ``channel_not_linked`` when none is linked."""
    caller = await current_caller()
    await unlink(caller.user.id, "telegram")
    return "", 204


@blueprint.post("/me/channels/feishu/link")
async def link_feishu() -> tuple[dict[str, Any], int]:
    """A one-time code (15 minutes) to send to the hub's Feishu/Lark bot in a one-to-one
    chat, which links the sender's Feishu account to you; ``url`` opens that chat."""
    caller = await current_caller()
    return await runtime_of(current_app).link_account(caller.user.id, "feishu"), 201


@blueprint.delete("/me/channels/feishu")
async def unlink_feishu() -> tuple[str, int]:
    """Unlink your Feishu account: cards stop going to its chat. 404 ``channel_not_linked``
    when none is linked."""
    caller = await current_caller()
    await unlink(caller.user.id, "feishu")
    return "", 204


@blueprint.post("/me/channels/slack/link")
async def link_slack() -> tuple[dict[str, Any], int]:
    """A one-time code (15 minutes) to send to the hub's Slack app in a direct message,
    which links the sender's Slack account to you; ``url`` opens that conversation."""
    caller = await current_caller()
    return await runtime_of(current_app).link_account(caller.user.id, "slack"), 201


@blueprint.delete("/me/channels/slack")
async def unlink_slack() -> tuple[str, int]:
    """Unlink your Slack account: cards stop going to its conversation. 404
    ``channel_not_linked`` when none is linked."""
    caller = await current_caller()
    await unlink(caller.user.id, "slack")
    return "", 204


@blueprint.get("/me/channels")
async def channels() -> dict[str, Any]:
    """The outside accounts you linked."""
    caller = await current_caller()
    return {"channels": await linked_accounts(caller.user.id)}
