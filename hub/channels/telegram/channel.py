"""The Telegram channel: cards as messages with inline buttons, answered in the chat.

Transport apart from dispatch: python-telegram-bot's ``Updater`` long-polls the Bot API
(``LINEUP_TELEGRAM_API_URL``; a local Bot API server works the same), or Telegram posts to
the webhook, and its ``Application`` calls the handlers: ``/start`` links an account
(``linking``), presses and replies become answers (``answers``: the core decides). What is
here sends the cards and notices and redraws their messages. Every message speaks the
language of the person the card was sent to.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
from typing import Any, ClassVar

from quart import Blueprint, request

from hub.channels.base import Capabilities, Channel, ChannelContext, DeliveryRefused, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.registry import MissingExtra
from hub.channels.telegram.linking import StartCommand
from hub.config import Settings
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

try:
    from telegram import Update
    from telegram.error import Forbidden
    from telegram.ext import (
        Application,
        CallbackQueryHandler,
        CommandHandler,
        MessageHandler,
        filters,
    )
except ImportError as missing:  # pragma: no cover - depends on the install
    raise MissingExtra("telegram", "telegram", "python-telegram-bot") from missing

# After the check above: these need python-telegram-bot too.
from hub.channels.telegram.answers import ChatAnswers
from hub.channels.telegram.batches import BatchMessages
from hub.channels.telegram.edits import edit_buttons, edit_message
from hub.channels.telegram.render import (
    card_keyboard,
    card_text,
    notice_text,
    recipient_chat,
)

SURFACE = "telegram"
WEBHOOK_PATH = "/telegram/webhook"


class TelegramChannel(Channel):
    name = SURFACE
    needs_account = True
    set_up_with = "LINEUP_TELEGRAM_BOT_TOKEN"
    capabilities: ClassVar[Capabilities] = Capabilities(max_content_chars=3000)
    # Long-poll timeout; shorter means a quicker stop, longer means fewer requests.
    poll_timeout_s: ClassVar[int] = 10

    def __init__(self, context: ChannelContext) -> None:
        super().__init__(context)
        settings = context.settings
        root = settings.telegram_api_url.rstrip("/")
        self.webhook_secret = settings.telegram_webhook_secret
        builder = (
            Application.builder()
            .token(settings.telegram_bot_token)
            .base_url(f"{root}/bot")
            .base_file_url(f"{root}/file/bot")
        )
        if self.webhook_secret:  # Telegram pushes updates to us: nothing to poll
            builder = builder.updater(None)
        self.application: Application[Any, Any, Any, Any, Any, Any] = builder.build()
        self.batches = BatchMessages(self.application.bot, context)
        answers = ChatAnswers(self)
        start = StartCommand(settings.resolved_public_url)
        self.application.add_handler(CommandHandler("start", start))
        self.application.add_handler(CallbackQueryHandler(answers.on_press))
        # Every text that is not a command: a reply answers its card, any other is told how.
        self.application.add_handler(
            MessageHandler(filters.TEXT & ~filters.COMMAND, answers.on_reply)
        )
        self._polling = False

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        return bool(settings.telegram_bot_token)

    @property
    def bot(self) -> Any:
        return self.application.bot

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        await self.application.initialize()  # getMe: the bot's username, for deep links
        if not self.application.running:
            await self.application.start()
        if self.webhook_secret:
            await self.bot.set_webhook(
                url=self.context.settings.resolved_public_url + WEBHOOK_PATH,
                secret_token=self.webhook_secret,
                allowed_updates=["message", "callback_query"],
            )
        elif self.application.updater is not None and not self.application.updater.running:
            await self.application.updater.start_polling(
                poll_interval=0, timeout=self.poll_timeout_s, drop_pending_updates=False
            )
        self._polling = True

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            if self.application.updater is not None and self.application.updater.running:
                await self.application.updater.stop()
        with contextlib.suppress(Exception):
            if self.application.running:
                await self.application.stop()
        with contextlib.suppress(Exception):
            await self.application.shutdown()

    def blueprint(self) -> Blueprint | None:
        """With a webhook secret, the endpoint Telegram posts updates to."""
        if not self.webhook_secret:
            return None
        blueprint = Blueprint("telegram_webhook", __name__)

        @blueprint.post(WEBHOOK_PATH)
        async def webhook() -> tuple[str, int]:
            given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
            if not hmac.compare_digest(given.encode(), self.webhook_secret.encode()):
                return "", 403
            data = await request.get_json(silent=True)
            if not isinstance(data, dict):
                return "", 400
            # Handled by the same Application (and handlers) as polled updates.
            await self.application.update_queue.put(Update.de_json(data, self.bot))
            return "", 200

        return blueprint

    async def deep_link(self, token: str) -> str:
        """``https://t.me/<bot>?start=<token>``; opening it sends ``/start <token>``."""
        if not self.bot.username:
            await self.application.initialize()
        return f"https://t.me/{self.bot.username}?start={token}"

    # --- delivery -------------------------------------------------------------------------

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        row = await self._row_for(recipient, card, self._bound_state(recipient, card))
        if row.external_id:  # sent already (a retry after the send went through)
            await self.batches.offer(recipient, card)
            return
        web_link = None
        with speaking(recipient.language):
            body, native = card_text(card, self.capabilities, viewer_id=recipient.user_id)
            if not native:
                web_link = self.context.card_link(card, recipient, via="web")
            markup = card_keyboard(card, row.id, _seen_by(row), web_link)
        message = await self._send(
            chat_id=recipient_chat(recipient),
            text=body,
            parse_mode="HTML",
            reply_markup=markup,
            disable_web_page_preview=True,
        )
        # Only these columns: a press on the new message may already have saved its state.
        await DeliveredCard.filter(id=row.id).update(
            address=str(message.chat_id), external_id=str(message.message_id), updated_at=utcnow()
        )
        await self.batches.offer(recipient, card)

    async def remind_card(self, recipient: Recipient, card: Card) -> None:
        """A reply to the card already in the chat, so its buttons are one tap away; the
        card itself when it was never sent here."""
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            await self.deliver_card(recipient, card)
            return
        await self._send(
            chat_id=int(row.address),
            text=_reminder(recipient, card),
            reply_to_message_id=int(row.external_id),
        )

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            return
        with speaking(recipient.language):
            if card.is_pending:  # a vote came in: the new count, and the buttons stay
                await self._show_pending(row, card, recipient)
                return
            await self.show_outcome(row, card)
        await self.batches.refresh(recipient, card)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        with speaking(recipient.language):
            body = notice_text(notice, url)
        await self._send(
            chat_id=recipient_chat(recipient),
            text=body,
            parse_mode="HTML",
            disable_web_page_preview=True,
        )

    async def _send(self, **message: Any) -> Any:
        try:
            return await self.bot.send_message(**message)
        except Forbidden as blocked:  # the person blocked the bot: retrying cannot help
            raise DeliveryRefused(str(blocked)) from blocked

    def _bound_state(self, recipient: Recipient, card: Card) -> dict[str, Any]:
        """What the message will show of the card's action: its hash, which every answer
        from this message carries, and the link to edit it on the web."""
        if card.action is None:
            return {}
        state: dict[str, Any] = {"actionHash": card.action_hash}
        if card.action.editable:
            state["editLink"] = self.context.card_link(card, recipient, via="web")
        return state

    async def _row_for(
        self, recipient: Recipient, card: Card, state: dict[str, Any]
    ) -> DeliveredCard:
        row = await _sent_row(recipient, card)
        if row is None:
            now = utcnow()
            row = await DeliveredCard.create(
                id=secrets.token_urlsafe(6),
                surface=SURFACE,
                user_id=recipient.user_id,
                workspace_id=card.workspace_id,
                interaction_id=card.id,
                state=state,
                created_at=now,
                updated_at=now,
            )
        return row

    async def _show_pending(self, row: DeliveredCard, card: Card, recipient: Recipient) -> None:
        body, native = card_text(card, self.capabilities, viewer_id=recipient.user_id)
        web_link = None if native else self.context.card_link(card, recipient, via="web")
        markup = card_keyboard(card, row.id, _seen_by(row), web_link)
        await edit_message(self.bot, row.address, row.external_id, body, markup)

    # --- what answering redraws (answers.CardMessages) ------------------------------------

    async def show_outcome(self, row: DeliveredCard, card: Card) -> None:
        body, _native = card_text(card, self.capabilities, viewer_id=row.user_id)
        await edit_message(self.bot, row.address, row.external_id, body, None)

    async def show_buttons(self, row: DeliveredCard, card: Card) -> None:
        markup = card_keyboard(card, row.id, _seen_by(row), None)
        await edit_buttons(self.bot, row.address, row.external_id, markup)


def _reminder(recipient: Recipient, card: Card) -> str:
    with speaking(recipient.language):
        return _("⏰ Reminder: “%(title)s” still waits for your answer.", title=card.title)


async def _sent_row(recipient: Recipient, card: Card) -> DeliveredCard | None:
    """The record of ``card``'s message to ``recipient``, once its delivery began."""
    return await DeliveredCard.filter(
        surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
    ).first()


def _seen_by(row: DeliveredCard) -> dict[str, Any]:
    """The message's state with whom it is for: a voter's copy drops its buttons."""
    return {**row.state, "viewer": row.user_id}
