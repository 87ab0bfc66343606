"""Editing a message the bot sent: a card or batch redrawn after a press or a decision.

Telegram refuses an edit that changes nothing ("message is not modified"); a redraw that
finds the message already as it should be is not an error, so it is ignored here once
for every caller.
"""

from __future__ import annotations

from typing import Any

from telegram.error import BadRequest

from hub.core.store.notification_models import DeliveredBatch, DeliveredCard


async def edit_message(bot: Any, address: str, message_id: str, body: str, markup: Any) -> None:
    """Replace the text and buttons of message ``message_id`` in chat ``address``."""
    try:
        await bot.edit_message_text(
            text=body,
            chat_id=int(address),
            message_id=int(message_id),
            parse_mode="HTML",
            reply_markup=markup,
            disable_web_page_preview=True,
        )
    except BadRequest as error:
        if not _unchanged(error):
            raise


async def edit_buttons(bot: Any, address: str, message_id: str, markup: Any) -> None:
    """Replace only the buttons of message ``message_id`` in chat ``address``."""
    try:
        await bot.edit_message_reply_markup(
            chat_id=int(address), message_id=int(message_id), reply_markup=markup
        )
    except BadRequest as error:
        if not _unchanged(error):
            raise


def note_pressed_message(row: DeliveredCard | DeliveredBatch, query: Any) -> None:
    """Pressed before the delivery finished recording where the message is: the press says
    it, so a redraw after the press edits the right message."""
    if query.message is not None and not row.external_id:
        row.address, row.external_id = str(query.message.chat_id), str(query.message.message_id)


def _unchanged(error: BadRequest) -> bool:
    return "not modified" in str(error).lower()
