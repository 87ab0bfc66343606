"""A signed outgoing-webhook channel, compatible with Slack incoming webhooks.

Written only against the hub's public channel API (``hub.channels``) and registered through
the ``lineup.channels`` entry point in this package's ``pyproject.toml``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import socket
import time
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from hub.channels import (
    Capabilities,
    Card,
    Channel,
    ChannelContext,
    DeliveryRefused,
    Notice,
    Recipient,
)
from hub.config import Settings

URL_VARIABLE = "WEBHOOK_CHANNEL_URL"
SECRET_VARIABLE = "WEBHOOK_CHANNEL_SECRET"

__all__ = ["WebhookChannel", "sign"]


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), b"v1:" + timestamp.encode() + b":" + body, hashlib.sha256)
    return "v1=" + digest.hexdigest()


class WebhookChannel(Channel):
    name = "webhook"
    # A webhook message cannot be changed once posted; the links show the outcome.
    capabilities: ClassVar[Capabilities] = Capabilities(
        multi_select=False, max_content_chars=2500, updates_sent_cards=False
    )

    def __init__(self, context: ChannelContext) -> None:
        super().__init__(context)
        self.url = os.environ[URL_VARIABLE]
        self.secret = os.environ.get(SECRET_VARIABLE, "")
        self.client: httpx.AsyncClient | None = None

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        return bool(os.environ.get(URL_VARIABLE))

    async def start(self) -> None:
        self.client = httpx.AsyncClient(timeout=10.0)

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        lines = [f"*{card.title}*"]
        if card.agent_name:
            lines.append(f"{card.agent_name} is waiting for {recipient.display_name}.")
        if card.risk:
            lines.append(
                {"low": "ℹ️ Low risk", "medium": "⚠️ Medium risk", "high": "⛔ High risk"}[
                    card.risk.value
                ]
            )
        for label, value in (("Why", card.why), ("Impact", card.impact)):
            if value:
                lines.append(f"*{label}:* {value}")
        if self.capabilities.can_render(card) and not card.takes_text:
            buttons = [
                (o.label, self.context.card_link(card, recipient, via=self.name, option_id=o.id))
                for o in card.options
            ]
        else:  # text answers, several ticks or long reviews: answer on the web card
            buttons = [("Open the card", self.context.card_link(card, recipient, via=self.name))]
        await self._post(
            {
                "text": card.title,
                "blocks": [
                    {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
                    {
                        "type": "actions",
                        "elements": [
                            {
                                "type": "button",
                                "text": {"type": "plain_text", "text": label[:75]},
                                "url": url,
                            }
                            for label, url in buttons
                        ],
                    },
                ],
            }
        )

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        text = f"✖ Task failed: {notice.task_title}"
        if notice.error:
            text += f"\n{notice.error}"
        await self._post({"text": text})

    async def _post(self, message: dict[str, Any]) -> None:
        if self.client is None:
            raise RuntimeError("the webhook channel has not started")
        self._check_destination()
        body = json.dumps(message, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"}
        if self.secret:
            timestamp = str(int(time.time()))
            headers["X-Lineup-Timestamp"] = timestamp
            headers["X-Lineup-Signature"] = sign(self.secret, timestamp, body)
        response = await self.client.post(self.url, content=body, headers=headers)
        if response.status_code in (400, 403, 404, 410):
            # The hook is gone or refuses this message: sending it again cannot help.
            raise DeliveryRefused(f"the webhook answered {response.status_code}")
        response.raise_for_status()

    def _check_destination(self) -> None:
        """Never post to a private address unless the hub allows it (SSRF guard)."""
        if self.context.settings.outbound_allow_private:
            return
        host = urlsplit(self.url).hostname or ""
        for info in socket.getaddrinfo(host, None):
            address = ipaddress.ip_address(info[4][0])
            if address.is_private or address.is_loopback or address.is_link_local:
                raise DeliveryRefused(
                    f"{host} is a private address; set LINEUP_OUTBOUND_ALLOW_PRIVATE=true "
                    "to allow it"
                )
