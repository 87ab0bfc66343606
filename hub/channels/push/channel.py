"""The Web Push channel: cards on a person's lock screen, in every browser they turned it on.

Each person may have several browsers subscribed (``hub.core.notify.push_subscriptions``);
a card goes to each of them. A push a browser's service worker receives becomes a
notification (``hub/web/static/service-worker.js``), tagged with the card's id: a push
sent again after a failure replaces the notification it already showed instead of adding a
second one, so a retry is never a double. A card decided elsewhere is closed on every
device by a ``close`` push.

No third party is involved beyond the browsers' own push services, and no setting turns it
on: the hub makes its VAPID key pair on first start (``hub.channels.push.keys``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import ClassVar

from hub.channels.base import Capabilities, Channel, ChannelContext, DeliveryRefused, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.push import keys
from hub.channels.push.payload import card_payload, close_payload, notice_payload, test_payload
from hub.channels.push.sender import Push, PushFailed, PushSender, Sent, topic_for
from hub.config import Settings
from hub.core.notify.push_subscriptions import drop_endpoint, mark_sent, subscriptions_of
from hub.core.store.notification_models import PushSubscription
from hub.net.outbound import guarded_http_client
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)

# How long a push service keeps a push for a device that is away: a card is news for a day
# (it may well be decided sooner, and its close replaces it), a failure for a week.
CARD_TTL_S = 24 * 3600
CLOSE_TTL_S = 24 * 3600
NOTICE_TTL_S = 7 * 24 * 3600
SEND_TIMEOUT_S = 15.0


class PushChannel(Channel):
    name = "push"
    # Everything renders: what the lock screen cannot answer in one tap opens the card.
    capabilities: ClassVar[Capabilities] = Capabilities()
    needs_account = True  # a person is reachable once a browser of theirs subscribed

    def __init__(self, context: ChannelContext) -> None:
        super().__init__(context)
        settings = context.settings
        self.vapid = keys.load_or_create(settings.data_dir)
        self.public_key = keys.public_key(self.vapid)
        self._client = guarded_http_client(
            allow_private=settings.outbound_allow_private, timeout=SEND_TIMEOUT_S
        )
        self.sender = PushSender(self.vapid, _contact(settings), self._client)

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        return True

    async def stop(self) -> None:
        await self._client.aclose()

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        urgency = "high" if card.is_high_risk else "normal"
        push = Push(
            card_payload(card, recipient, self.context), CARD_TTL_S, urgency, topic_for(card.id)
        )
        await self._to_every_device(recipient, push)

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        if card.is_pending:  # a vote: the notification stays as it is
            return
        push = Push(close_payload(card), CLOSE_TTL_S, "normal", topic_for(card.id))
        await self._to_every_device(recipient, push)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        push = Push(notice_payload(notice, recipient, url), NOTICE_TTL_S, "normal")
        await self._to_every_device(recipient, push)

    async def send_test(self, recipient: Recipient, subscription: PushSubscription) -> Sent:
        """A notification to one browser, now: Settings' "Send a test"."""
        url = f"{self.context.settings.resolved_public_url}/settings"
        sent = await self.sender.send(subscription, Push(test_payload(recipient, url), 60, "high"))
        await self._after(subscription, sent)
        return sent

    async def _to_every_device(self, recipient: Recipient, push: Push) -> None:
        """Send to each of the person's browsers; a failure worth retrying is raised once
        all were tried (the retry resends to all: each notification replaces its copy)."""
        devices = await subscriptions_of(recipient.user_id)
        if not devices:
            raise DeliveryRefused(f"{recipient.user_id} has no browser with push on any more")
        failures: list[str] = []
        for subscription in devices:
            try:
                sent = await self.sender.send(subscription, push)
            except PushFailed as failed:
                failures.append(str(failed))
                continue
            await self._after(subscription, sent)
        if failures:
            raise PushFailed("; ".join(failures))

    async def _after(self, subscription: PushSubscription, sent: Sent) -> None:
        if sent is Sent.SENT:
            await mark_sent(subscription.id, utcnow())
        elif sent is Sent.GONE:
            logger.info("push subscription %s is gone; removing it", subscription.id)
            await drop_endpoint(subscription.endpoint)
        else:
            logger.warning("push service refused a push for subscription %s", subscription.id)


def _contact(settings: Settings) -> str:
    """VAPID's ``sub``: how a push service reaches the operator."""
    contact = settings.push_contact or settings.email_from
    return contact if contact.startswith(("mailto:", "https:")) else f"mailto:{contact}"


def running_push(channels: Mapping[str, Channel]) -> PushChannel | None:
    """The hub's push channel among its running ``channels`` (``ChannelRuntime.channels``);
    None when push is not installed."""
    channel = channels.get(PushChannel.name)
    return channel if isinstance(channel, PushChannel) else None
