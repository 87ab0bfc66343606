"""A link code sent to the bot: linking the sender's Feishu account to a hub account.

The person asks for the code while signed in to the hub (Settings → Feishu, or
``ChannelRuntime.link_account``), opens the chat with the hub's bot and sends it the code;
the one-to-one chat it arrives from becomes where their cards go. Any other message gets
where to make a code: ``{public_url}/settings#feishu``. Until the sender is known to the
hub, replies are in both languages: the event does not say which the person reads.
"""

from __future__ import annotations

import re

from hub.channels.feishu.api import FeishuApi
from hub.channels.feishu.inbound import IncomingText
from hub.channels.feishu.render import text_message
from hub.core.errors import Gone
from hub.core.notify.channel_accounts import redeem_link_token
from hub.core.notify.preferences import settings_for
from hub.i18n import gettext as _
from hub.i18n import speaking

SURFACE = "feishu"
# A link token is 32 URL-safe characters; anything else is not an attempt at one.
_CODE = re.compile(r"^[A-Za-z0-9_-]{32}$")


class LinkCodes:
    def __init__(self, api: FeishuApi, public_url: str) -> None:
        self.api = api
        self.settings_url = f"{public_url.rstrip('/')}/settings#feishu"

    async def on_text(self, message: IncomingText) -> None:
        code = message.text.strip()
        if not _CODE.match(code):
            await self._reply(message, _both(self._hello))
            return
        try:
            account = await redeem_link_token(
                SURFACE, code, external_id=message.open_id, address=message.chat_id
            )
        except Gone:
            await self._reply(message, _both(self._invalid))
            return
        with speaking((await settings_for(account.user_id)).language or "en"):
            linked = _("Linked. Cards from LineUp Hub will come to this chat.")
        await self._reply(message, linked)

    async def _reply(self, message: IncomingText, text: str) -> None:
        # A card, not a text message: nothing in it can mention anyone.
        await self.api.send_card(
            message.chat_id, text_message(text), uuid=f"re-{message.event_id}"[:50]
        )

    def _hello(self) -> str:
        return _(
            "Hello! To get your cards here, open LineUp Hub's Settings → Feishu, press Link "
            "Feishu and send me the code it shows: %(url)s",
            url=self.settings_url,
        )

    def _invalid(self) -> str:
        return _(
            "This code is invalid or expired: codes work once, for 15 minutes. Create a new "
            "one in Settings → Feishu: %(url)s",
            url=self.settings_url,
        )


def _both(sentence: object) -> str:
    said = []
    for language in ("zh-Hans", "en"):
        with speaking(language):
            said.append(sentence())  # type: ignore[operator]
    return "\n\n".join(dict.fromkeys(said))
