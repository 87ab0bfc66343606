"""``/start <token>``: linking the sender's Telegram account to a hub account.

The token comes from a one-time deep link the person created while signed in to the hub
(``ChannelRuntime.link_account``); the chat it arrives from becomes where their cards go.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from hub.channels.i18n import text
from hub.core.channel_accounts import redeem_link_token
from hub.core.errors import Gone
from hub.core.preferences import settings_for

SURFACE = "telegram"


async def link_sender(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message, sender = update.effective_message, update.effective_user
    if message is None or sender is None:
        return
    language = "zh-Hans" if (sender.language_code or "").startswith("zh") else "en"
    if not context.args:
        await message.reply_text(text(language, "tg.hello"))
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
        await message.reply_text(text(language, "tg.link_invalid"))
        return
    language = (await settings_for(account.user_id)).language or language
    await message.reply_text(text(language, "tg.linked"))
