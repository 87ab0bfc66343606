"""One push to one browser, as RFC 8030 asks: encrypted, signed, with its time to live.

The body is encrypted to the subscription's keys (``aes128gcm``, RFC 8188/8291, by
``pywebpush``) so the push service sees ciphertext only, and the request carries a VAPID
token signed with the hub's key (RFC 8292, by ``py-vapid``): ``aud`` is the push service's
origin, ``exp`` 12 hours ahead (services refuse more than 24), ``sub`` the operator's
contact. ``Urgency`` lets a phone wake for a high-risk card and wait for a battery-friendly
moment otherwise; ``Topic`` makes a later push about the same card (its close) replace one
the device has not fetched yet.

The request goes through the hub's guarded HTTP client: a subscription naming a private or
loopback address is refused unless ``LINEUP_OUTBOUND_ALLOW_PRIVATE`` is set.
"""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

import httpx
from py_vapid import Vapid02

from hub.core.store.notification_models import PushSubscription
from hub.host.deferred_imports import import_off_the_loop
from hub.net.outbound import OutboundRefused

TOKEN_LIFETIME_S = 12 * 3600


class Sent(StrEnum):
    SENT = "sent"
    GONE = "gone"  # 404/410: the browser unsubscribed, or the service forgot it
    REFUSED = "refused"  # another 4xx: this push cannot go, sending it again will not help


class PushFailed(Exception):
    """A failure worth retrying: the push service was unreachable, busy or failing."""


@dataclass(frozen=True, slots=True)
class Push:
    body: bytes
    ttl_s: int
    urgency: str  # very-low, low, normal, high
    topic: str | None = None


def topic_for(name: str) -> str:
    """A ``Topic`` for ``name``: at most 32 characters of the URL-safe alphabet."""
    digest = hashlib.sha256(name.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:32]


class PushSender:
    def __init__(self, vapid: Vapid02, contact: str, client: httpx.AsyncClient) -> None:
        self.vapid = vapid
        self.contact = contact
        self.client = client

    async def send(self, subscription: PushSubscription, push: Push) -> Sent:
        # pywebpush brings aiohttp and requests with it, 0.14 s of the hub's start and
        # memory a hub nobody subscribed to has no use for: loaded with the first push
        # (hub.host.deferred_imports).
        await import_off_the_loop("pywebpush")
        from pywebpush import WebPusher

        keys = {"p256dh": subscription.p256dh, "auth": subscription.auth}
        pusher = WebPusher({"endpoint": subscription.endpoint, "keys": keys})
        encrypted = pusher.encode(push.body, content_encoding="aes128gcm")
        parts = urlsplit(subscription.endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int(time.time()) + TOKEN_LIFETIME_S,
            "sub": self.contact,
        }
        headers = {
            **self.vapid.sign(claims),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(push.ttl_s),
            "Urgency": push.urgency,
        }
        if push.topic:
            headers["Topic"] = push.topic
        try:
            response = await self.client.post(
                subscription.endpoint, content=encrypted["body"], headers=headers
            )
        except OutboundRefused:  # a private address, not allowed here: it will not change
            return Sent.REFUSED
        except httpx.HTTPError as error:
            raise PushFailed(f"{parts.hostname}: {type(error).__name__}: {error}") from error
        if response.status_code in (200, 201, 202):
            return Sent.SENT
        if response.status_code in (404, 410):
            return Sent.GONE
        if response.status_code == 429 or response.status_code >= 500:
            raise PushFailed(f"{parts.hostname} answered {response.status_code}")
        return Sent.REFUSED
