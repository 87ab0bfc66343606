"""Web Push: the hub's public key, and the browsers a person turned push on in.

A browser subscribes with ``pushManager.subscribe({applicationServerKey: <public key>})``
and posts the result, ``PushSubscription.toJSON()``, here. Each person sees and removes
their own subscriptions only, and never an endpoint (a capability to push to that browser):
only the push service's name.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint, current_app

from hub.channels.push.channel import PushChannel, running_push
from hub.channels.push.sender import PushFailed, Sent
from hub.channels.runtime import runtime_of
from hub.core.errors import Conflict, Gone, NotFound, Unavailable
from hub.core.notify.push_subscriptions import (
    subscribe,
    subscription_of,
    subscription_view,
    subscriptions_of,
    unsubscribe,
)
from hub.host.identity import current_caller
from hub.host.settings import settings_of
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_push_subscriptions", __name__, url_prefix="/api/v1")


class PushKeys(ApiModel):
    p256dh: str = Field(max_length=200)
    auth: str = Field(max_length=100)


class NewPushSubscription(ApiModel):
    """The browser's ``PushSubscription.toJSON()`` (``expirationTime`` is ignored), and
    optionally what to call this device (``device``: "Phone", at most 200 characters)."""

    endpoint: str = Field(max_length=2000)
    keys: PushKeys
    device: str = Field("", max_length=200)


def _push() -> PushChannel:
    channel = running_push(runtime_of(current_app).channels)
    if channel is None:
        raise NotFound(
            "Push is not available on this hub.",
            code="push_not_available",
            hint="The hub's operator installs it with pip install 'lineup-hub[push]'.",
        )
    return channel


@blueprint.get("/push/public-key")
async def public_key() -> dict[str, Any]:
    """The hub's VAPID public key, for ``pushManager.subscribe``'s ``applicationServerKey``."""
    await current_caller()
    return {"publicKey": _push().public_key}


@blueprint.get("/me/push-subscriptions")
async def subscriptions() -> dict[str, Any]:
    """The browsers you turned push on in."""
    caller = await current_caller()
    rows = await subscriptions_of(caller.user.id)
    return {"subscriptions": [subscription_view(row) for row in rows]}


@blueprint.post("/me/push-subscriptions")
@json_body(NewPushSubscription)
async def add_subscription(body: NewPushSubscription) -> tuple[dict[str, Any], int]:
    """Turn push on in this browser (the same browser again updates its row). 422
    ``invalid_push_subscription`` when it is not a browser's subscription,
    ``too_many_devices`` past 20 browsers."""
    caller = await current_caller()
    _push()
    row = await subscribe(
        caller.user.id,
        {"endpoint": body.endpoint, "keys": body.keys.model_dump()},
        device=body.device,
        allow_http=settings_of(current_app).outbound_allow_private,
    )
    return subscription_view(row), 201


@blueprint.delete("/me/push-subscriptions/<subscription_id>")
async def remove_subscription(subscription_id: str) -> tuple[str, int]:
    """Turn push off in one of your browsers."""
    caller = await current_caller()
    await unsubscribe(caller.user.id, subscription_id)
    return "", 204


@blueprint.post("/me/push-subscriptions/<subscription_id>/test")
async def test_subscription(subscription_id: str) -> tuple[dict[str, Any], int]:
    """Send a test notification to one of your browsers, now. 410 ``push_subscription_gone``
    when its push service no longer knows it (it is removed), 503 when the service did not
    take it."""
    caller = await current_caller()
    channel = _push()
    row = await subscription_of(caller.user.id, subscription_id)
    if row is None:
        raise NotFound("No such push subscription of yours.", code="push_subscription_not_found")
    recipient = await runtime_of(current_app).recipient(caller.user, "push")
    try:
        sent = await channel.send_test(recipient, row)
    except PushFailed as failed:
        raise Unavailable(
            f"The push service did not take the notification: {failed}",
            code="push_service_unavailable",
            hint="Try again in a minute.",
        ) from None
    if sent is Sent.GONE:
        raise Gone(
            "That browser's push service no longer knows it, so it was removed.",
            code="push_subscription_gone",
            hint="Turn push on again in that browser.",
        )
    if sent is Sent.REFUSED:
        raise Conflict(
            "The push service refused the notification.",
            code="push_refused",
            hint="Turn push off and on again in this browser.",
        )
    return {"sent": True}, 202
