"""``/start <token>``: linking the sender's Telegram account to a hub account.

The token comes from a one-time deep link the person created while signed in to the hub
(Settings → Telegram, or ``ChannelRuntime.link_account``); the chat it arrives from becomes
where their cards go. Without a token, or with one that no longer works, the reply says
where to make a link: ``{public_url}/settings#telegram``, which takes a signed-in person to
their workspace's Settings (the bot cannot know which workspace). Until the sender is known
to the hub, replies follow the language of their Telegram app.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from hub.core.errors import Gone
from hub.core.notify.channel_accounts import redeem_link_token
from hub.core.notify.preferences import settings_for
from hub.i18n import gettext as _
from hub.i18n import speaking

SURFACE = "telegram"


class StartCommand:
    """The ``/start`` handler of the bot of the hub at ``public_url``."""

    def __init__(self, public_url: str) -> None:
        self.settings_url = f"{public_url.rstrip('/')}/settings#telegram"

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, sender = update.effective_message, update.effective_user
        if message is None or sender is None:
            return
        language = "zh-Hans" if (sender.language_code or "").startswith("zh") else "en"
        if not context.args:
            with speaking(language):
                hello = _(
                    "Hello! To get your cards here, open LineUp Hub's Settings → Telegram, "
                    "press Link Telegram and open the link it shows: %(url)s",
                    url=self.settings_url,
                )
            await message.reply_text(hello, disable_web_page_preview=True)
            return
        try:
            account = await redeem_link_token(
                SURFACE,
                context.args[0],
                external_id=str(sender.id),
                address=str(message.chat_id),
                display_name=sender.full_name,
            )
        except Gone:
            with speaking(language):
                invalid = _(
                    "This link is invalid or expired: links work once, for 15 minutes. "
                    "Create a new one in Settings → Telegram: %(url)s",
                    url=self.settings_url,
                )
            await message.reply_text(invalid, disable_web_page_preview=True)
            return
        with speaking((await settings_for(account.user_id)).language or language):
            linked = _("Linked. Cards from LineUp Hub will come to this chat.")
        await message.reply_text(linked)
