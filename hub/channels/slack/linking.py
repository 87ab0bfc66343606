"""A direct message to the bot with a one-time code: linking the sender's Slack account.

The code comes from Settings → Slack (or ``POST /api/v1/me/channels/slack/link``), made
while signed in to the hub; the person sends it to the app in Slack, in its Messages tab.
The conversation it arrives in becomes where their cards go. A message without a code, or
with one that no longer works, is answered with where to make one:
``{public_url}/settings#slack``. The bot's own messages come back as events too and are
ignored. Until the sender is known to the hub, replies follow their Slack locale.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from hub.channels.slack.blocks import escape
from hub.channels.slack.web_api import SlackApi
from hub.core.errors import Gone
from hub.core.notify.channel_accounts import redeem_link_token
from hub.core.notify.preferences import settings_for
from hub.i18n import gettext as _
from hub.i18n import speaking

logger = logging.getLogger(__name__)
SURFACE = "slack"
# A link code as create_link_token makes it (token_urlsafe(24): 32 of A-Za-z0-9_-).
_CODE = re.compile(r"(?<![\w-])([A-Za-z0-9_-]{32})(?![\w-])")


class DirectMessages:
    """Handles ``message`` events of the app's direct conversations."""

    def __init__(self, api: SlackApi, public_url: str) -> None:
        self.api = api
        self.settings_url = f"{public_url.rstrip('/')}/settings#slack"

    async def on_event(self, envelope: dict[str, Any]) -> None:
        event = envelope.get("event") or {}
        if event.get("type") != "message" or event.get("channel_type") != "im":
            return
        if event.get("bot_id") or event.get("subtype"):  # the bot's own, edits, joins
            return
        sender, channel = str(event.get("user") or ""), str(event.get("channel") or "")
        if not sender or not channel:
            return
        profile = await self._profile(sender)
        language = "zh-Hans" if str(profile.get("locale") or "").startswith("zh") else "en"
        found = _CODE.search(str(event.get("text") or ""))
        if found is None:
            with speaking(language):
                hello = _(
                    "Hello! To get your cards here, open LineUp Hub's Settings → Slack, "
                    "press Link Slack and send me the code it shows: %(url)s",
                    url=self.settings_url,
                )
            await self._say(channel, hello)
            return
        try:
            account = await redeem_link_token(
                SURFACE,
                found.group(1),
                external_id=sender,
                address=channel,
                display_name=str(profile.get("name") or sender),
            )
        except Gone:
            with speaking(language):
                invalid = _(
                    "This code is invalid or expired: codes work once, for 15 minutes. "
                    "Create a new one in Settings → Slack: %(url)s",
                    url=self.settings_url,
                )
            await self._say(channel, invalid)
            return
        with speaking((await settings_for(account.user_id)).language or language):
            linked = _("Linked. Cards from LineUp Hub will come to this chat.")
        await self._say(channel, linked)

    async def _profile(self, user: str) -> dict[str, Any]:
        """The sender's name and locale, as Slack shows them (needs ``users:read``); the
        link works without them."""
        try:
            answer = await self.api.call("users_info", user=user, include_locale=True)
        except Exception as error:
            logger.info("Slack's users.info for %s failed: %s", user, error)
            return {}
        found = answer.get("user") or {}
        profile = found.get("profile") or {}
        name = profile.get("display_name") or profile.get("real_name") or found.get("real_name")
        return {"name": name or found.get("name"), "locale": found.get("locale")}

    async def _say(self, channel: str, text: str) -> None:
        await self.api.post_message(channel=channel, text=escape(text))
