"""The browsers a person turned push on in: their Web Push subscriptions, one per device.

A browser subscribes with the hub's public VAPID key and hands over the standard
``PushSubscription`` JSON: the push service's ``endpoint`` (a capability URL: whoever holds
it can send to that browser) and the keys messages are encrypted to, ``p256dh`` and
``auth`` (RFC 8291). The same browser subscribing again updates its row; a browser whose
endpoint arrives from another account now belongs to that account (the newer sign-in
wins), as a Telegram chat linked again does.

While a person has a subscription, they have an account on the ``push`` surface
(``ChannelAccount``), so the outbox writes push notifications for them as it does for a
linked Telegram; with their last subscription gone (removed, or answered 404/410 by the
push service), so is the account.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.store.notification_models import ChannelAccount, PushSubscription
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import iso, utcnow

SURFACE = "push"
MAX_DEVICES = 20
MAX_ENDPOINT_CHARS = 2000

Connection = Any


def _key(value: Any, name: str, length: int, *, first: int | None = None) -> str:
    """A base64url key of ``length`` bytes, as the browser gave it."""
    text = value if isinstance(value, str) else ""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != length or (first is not None and raw[0] != first):
        raise InvalidInput(
            f"keys.{name} must be the browser's {name} key: {length} bytes in base64url.",
            code="invalid_push_subscription",
            hint="Send the browser's PushSubscription.toJSON() unchanged.",
        )
    return text.rstrip("=")


def _endpoint(value: Any, *, allow_http: bool) -> str:
    endpoint = value if isinstance(value, str) else ""
    parts = urlsplit(endpoint)
    schemes = ("https", "http") if allow_http else ("https",)
    if not endpoint or len(endpoint) > MAX_ENDPOINT_CHARS or parts.scheme not in schemes:
        raise InvalidInput(
            "endpoint must be the push service's https URL the browser gave.",
            code="invalid_push_subscription",
            hint="Send the browser's PushSubscription.toJSON() unchanged.",
        )
    if not parts.hostname:
        raise InvalidInput("endpoint has no host.", code="invalid_push_subscription")
    return endpoint


async def subscribe(
    user_id: str,
    subscription: dict[str, Any],
    *,
    device: str = "",
    allow_http: bool = False,
) -> PushSubscription:
    """Store (or refresh) one browser's subscription for ``user_id``.

    Raises ``InvalidInput`` (``invalid_push_subscription``) for anything that is not a
    browser's subscription, and (``too_many_devices``) past ``MAX_DEVICES``; nothing is
    stored then."""
    keys = subscription.get("keys") if isinstance(subscription, dict) else None
    if not isinstance(keys, dict):
        raise InvalidInput(
            "A push subscription needs its keys: {endpoint, keys: {p256dh, auth}}.",
            code="invalid_push_subscription",
            hint="Send the browser's PushSubscription.toJSON() unchanged.",
        )
    endpoint = _endpoint(subscription.get("endpoint"), allow_http=allow_http)
    p256dh = _key(keys.get("p256dh"), "p256dh", 65, first=4)  # an uncompressed P-256 point
    auth = _key(keys.get("auth"), "auth", 16)
    now = utcnow()
    async with in_transaction() as connection:
        row = await PushSubscription.filter(endpoint=endpoint).using_db(connection).first()
        previous_owner = row.user_id if row is not None else None
        if previous_owner != user_id:
            count = await PushSubscription.filter(user_id=user_id).using_db(connection).count()
            if count >= MAX_DEVICES:
                raise InvalidInput(
                    f"Push is on in {MAX_DEVICES} browsers already.",
                    code="too_many_devices",
                    hint="Turn it off in a browser you no longer use (Settings → Push).",
                )
        if row is None:
            row = await PushSubscription.create(
                using_db=connection,
                id=new_id("push_subscription"),
                user_id=user_id,
                endpoint=endpoint,
                p256dh=p256dh,
                auth=auth,
                device=device.strip()[:200],
                created_at=now,
            )
        else:
            row.user_id, row.p256dh, row.auth = user_id, p256dh, auth
            row.device = device.strip()[:200] or row.device
            await row.save(using_db=connection)
        await _keep_account(user_id, connection)
        if previous_owner is not None and previous_owner != user_id:
            await _keep_account(previous_owner, connection)
    return row


async def subscriptions_of(user_id: str) -> list[PushSubscription]:
    return await PushSubscription.filter(user_id=user_id).order_by("created_at")


async def subscription_of(user_id: str, subscription_id: str) -> PushSubscription | None:
    """One of the person's own subscriptions; None for anyone else's, or none."""
    return await PushSubscription.filter(id=subscription_id, user_id=user_id).first()


async def unsubscribe(user_id: str, subscription_id: str) -> None:
    """Remove one of the person's own subscriptions; ``NotFound`` for any other id."""
    async with in_transaction() as connection:
        deleted = await (
            PushSubscription.filter(id=subscription_id, user_id=user_id)
            .using_db(connection)
            .delete()
        )
        if not deleted:
            raise NotFound(
                "No such push subscription of yours.",
                code="push_subscription_not_found",
                hint="List yours with GET /api/v1/me/push-subscriptions.",
            )
        await _keep_account(user_id, connection)


async def drop_endpoint(endpoint: str) -> None:
    """Forget a subscription its push service says is gone (404, 410)."""
    async with in_transaction() as connection:
        row = await PushSubscription.filter(endpoint=endpoint).using_db(connection).first()
        if row is None:
            return
        await row.delete(using_db=connection)
        await _keep_account(row.user_id, connection)


async def drop_all() -> int:
    """Forget every subscription (the hub's key changed: none of them can be sent to)."""
    async with in_transaction() as connection:
        count = await PushSubscription.all().using_db(connection).delete()
        await ChannelAccount.filter(surface=SURFACE).using_db(connection).delete()
    return count


async def mark_sent(subscription_id: str, now: datetime) -> None:
    await PushSubscription.filter(id=subscription_id).update(last_sent_at=now)


def subscription_view(row: PushSubscription) -> dict[str, Any]:
    """What a person sees of a subscription: never the endpoint itself, only its service."""
    parts = urlsplit(row.endpoint)
    return {
        "id": row.id,
        "device": row.device,
        "pushService": parts.hostname or "",
        "createdAt": iso(row.created_at),
        "lastSentAt": iso(row.last_sent_at) if row.last_sent_at else None,
    }


async def _keep_account(user_id: str, connection: Connection) -> None:
    """The person's push account exists exactly while they have a subscription."""
    has_devices = await PushSubscription.filter(user_id=user_id).using_db(connection).exists()
    account = ChannelAccount.filter(user_id=user_id, surface=SURFACE).using_db(connection)
    if not has_devices:
        await account.delete()
        return
    if not await account.exists():
        await ChannelAccount.create(
            using_db=connection,
            id=new_id("channel_account"),
            user_id=user_id,
            surface=SURFACE,
            external_id=user_id,
            address=user_id,
            display_name="",
            linked_at=utcnow(),
        )


__all__ = [
    "MAX_DEVICES",
    "SURFACE",
    "drop_all",
    "drop_endpoint",
    "mark_sent",
    "subscribe",
    "subscription_of",
    "subscription_view",
    "subscriptions_of",
    "unsubscribe",
]
