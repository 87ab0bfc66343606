"""``/start <token>``: linking the sender's Telegram account to a hub account.

The token comes from a one-time deep link the person created while signed in to the hub
(``ChannelRuntime.link_account``); the chat it arrives from becomes where their cards go.
Until the sender is known to the hub, replies follow the language of their Telegram app.
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


async def link_sender(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message, sender = update.effective_message, update.effective_user
    if message is None or sender is None:
        return
    language = "zh-Hans" if (sender.language_code or "").startswith("zh") else "en"
    if not context.args:
        with speaking(language):
            hello = _("Hello! Link this chat from LineUp Hub: Settings → Telegram.")
        await message.reply_text(hello)
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
            invalid = _("This link is invalid or expired: create a new one in Settings.")
        await message.reply_text(invalid)
        return
    with speaking((await settings_for(account.user_id)).language or language):
        linked = _("Linked. Cards from LineUp Hub will come to this chat.")
    await message.reply_text(linked)
