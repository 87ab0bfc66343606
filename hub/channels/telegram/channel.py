"""The Telegram channel: cards as messages with inline buttons, answered in the chat.

Transport apart from dispatch: python-telegram-bot's ``Updater`` long-polls the Bot API
(``LINEUP_TELEGRAM_API_URL``; a local Bot API server works the same) and its
``Application`` calls the handlers here, which only translate a press or a reply into
``ChannelContext.respond`` — the core decides.

Rules every handler keeps: a press is always answered (``answerCallbackQuery``), even when
refused; only the Telegram user linked to the person the card was sent to may answer it
(checked against ``ChannelAccount`` on every press); a decided card's message is edited to
the outcome, here at once and on every other surface through the outbox's update. Every
message speaks the language of the person the card was sent to.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import secrets
from typing import Any, ClassVar

from quart import Blueprint, request

from hub.channels.base import Capabilities, Channel, ChannelContext, DeliveryRefused, Recipient
from hub.channels.cards import Card, Notice, load_card
from hub.channels.registry import MissingExtra
from hub.channels.telegram.linking import link_sender
from hub.channels.wording import (
    already_decided_text,
    not_allowed_to_answer_text,
    outcome_text,
    voted_text,
)
from hub.config import Settings
from hub.core.approvals.permissions import NotAllowedToAnswer, may_answer
from hub.core.errors import AlreadyDecided, Conflict, Gone, HubError, InvalidInput
from hub.core.errors import Forbidden as NotAllowed  # telegram has a Forbidden of its own
from hub.core.notify.channel_accounts import account_for_identity
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

try:
    from telegram import ForceReply, Update
    from telegram.error import Forbidden
    from telegram.ext import (
        Application,
        CallbackQueryHandler,
        CommandHandler,
        ContextTypes,
        MessageHandler,
        filters,
    )
except ImportError as missing:  # pragma: no cover - depends on the install
    raise MissingExtra("telegram", "telegram", "python-telegram-bot") from missing

# After the check above: these need python-telegram-bot too.
from hub.channels.telegram import batches
from hub.channels.telegram.edits import edit_buttons, edit_message
from hub.channels.telegram.render import (
    REQUEST_CHANGES,
    card_keyboard,
    card_text,
    notice_text,
    recipient_chat,
)

logger = logging.getLogger(__name__)
SURFACE = "telegram"
WEBHOOK_PATH = "/telegram/webhook"


class TelegramChannel(Channel):
    name = SURFACE
    needs_account = True
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
        self.application.add_handler(CommandHandler("start", link_sender))
        self.application.add_handler(CallbackQueryHandler(self._on_press))
        self.batches = batches.BatchMessages(self.application.bot, context)
        self.application.add_handler(
            MessageHandler(filters.REPLY & filters.TEXT & ~filters.COMMAND, self._on_reply)
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
        try:
            message = await self.bot.send_message(
                chat_id=recipient_chat(recipient),
                text=body,
                parse_mode="HTML",
                reply_markup=markup,
                disable_web_page_preview=True,
            )
        except Forbidden as blocked:  # the person blocked the bot: retrying cannot help
            raise DeliveryRefused(str(blocked)) from blocked
        # Only these columns: a press on the new message may already have saved its state.
        await DeliveredCard.filter(id=row.id).update(
            address=str(message.chat_id), external_id=str(message.message_id), updated_at=utcnow()
        )
        await self.batches.offer(recipient, card)

    async def remind_card(self, recipient: Recipient, card: Card) -> None:
        """A reply to the card already in the chat, so its buttons are one tap away; the
        card itself when it was never sent here."""
        row = await DeliveredCard.filter(
            surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
        ).first()
        if row is None or not row.external_id:
            await self.deliver_card(recipient, card)
            return
        try:
            await self.bot.send_message(
                chat_id=int(row.address),
                text=_reminder(recipient, card),
                reply_to_message_id=int(row.external_id),
            )
        except Forbidden as blocked:
            raise DeliveryRefused(str(blocked)) from blocked

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        row = await DeliveredCard.filter(
            surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
        ).first()
        if row is None or not row.external_id:
            return
        with speaking(recipient.language):
            if card.is_pending:  # a vote came in: the new count, and the buttons stay
                await self._show_pending(row, card, recipient)
                return
            await self._show_outcome(row, card)
        await self.batches.refresh(recipient, card)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        with speaking(recipient.language):
            body = notice_text(notice, url)
        try:
            await self.bot.send_message(
                chat_id=recipient_chat(recipient),
                text=body,
                parse_mode="HTML",
                disable_web_page_preview=True,
            )
        except Forbidden as blocked:
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
        row = await DeliveredCard.filter(
            surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
        ).first()
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

    async def _show_outcome(self, row: DeliveredCard, card: Card) -> None:
        body, _native = card_text(card, self.capabilities, viewer_id=row.user_id)
        await edit_message(self.bot, row.address, row.external_id, body, None)

    # --- what people do in the chat -------------------------------------------------------

    async def _on_press(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        try:
            answer = await self._handle_press(query, str(query.data or ""))
        except Exception:
            logger.exception("handling a Telegram button press failed")
            answer = (_("This card is no longer here."), True)
        with contextlib.suppress(Exception):
            await query.answer(answer[0][:200], show_alert=answer[1])

    async def _handle_press(self, query: Any, data: str) -> tuple[str, bool]:
        if data.startswith(batches.PREFIX):
            return await self.batches.on_press(query, data)
        short_id, _colon, rest = data.partition(":")
        row = await DeliveredCard.filter(id=short_id, surface=SURFACE).first()
        if row is None:
            return _("This card is no longer here."), True
        if query.message is not None and not row.external_id:
            # Pressed before the delivery finished recording where the message is.
            row.address, row.external_id = str(query.message.chat_id), str(query.message.message_id)
        recipient = await self.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            return await self._act_on_press(query, row, recipient, rest)

    async def _act_on_press(
        self, query: Any, row: DeliveredCard, recipient: Recipient, rest: str
    ) -> tuple[str, bool]:
        action, _colon, argument = rest.partition(":")
        account = await account_for_identity(SURFACE, str(query.from_user.id))
        if account is None or account.user_id != row.user_id:
            return _("This card is for someone else."), True
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is None:
            return _("This card is no longer here."), True
        if not card.is_pending:
            await self._show_outcome(row, card)
            if card.status == "resolved":
                return already_decided_text(card), True
            return outcome_text(card) or "", True
        if card.policy is not None and (vote := card.policy.vote_of(row.user_id)):
            await self._show_outcome(row, card)
            option = card.option(str(vote.get("optionId")))
            return _("You already voted: %(label)s.", label=option.label if option else ""), True
        if not await may_answer(row.workspace_id, row.user_id):
            # Sent while they could answer; since made a viewer, or removed.
            return not_allowed_to_answer_text(), True
        index = int(argument) if argument.isdigit() else -1
        if action in ("o", "c", "t") and not 0 <= index < len(card.options):
            return _("This card is no longer here."), True
        if action == "o":
            option = card.options[index]
            if card.type.value == "review" and option.id == REQUEST_CHANGES:
                return await self._ask_comment(row, card, recipient, option.id)
            if card.is_high_risk:
                row.state = {**row.state, "confirm": index}
                await self._redraw(row, card)
                return _("Tap again to confirm."), False
            return await self._decide(row, card, recipient, {"optionId": option.id, **_bound(row)})
        if action == "c":
            if row.state.get("confirm") != index:
                return _("Tap again to confirm."), True
            chosen = {"optionId": card.options[index].id, **_bound(row)}
            return await self._decide(row, card, recipient, chosen)
        if action == "x":
            row.state = {k: v for k, v in row.state.items() if k != "confirm"}
            await self._redraw(row, card)
            return _("Not answered."), False
        if action == "t":
            ticked = set(row.state.get("ticked") or [])
            ticked ^= {index}
            row.state = {**row.state, "ticked": sorted(ticked)}
            await self._redraw(row, card)
            return _("Ticked: %(count)s", count=len(ticked)), False
        if action == "s":
            ticked = set(row.state.get("ticked") or [])
            ids = [o.id for i, o in enumerate(card.options) if i in ticked]
            return await self._decide(row, card, recipient, {"optionIds": ids})
        return _("This card is no longer here."), True

    async def _redraw(self, row: DeliveredCard, card: Card) -> None:
        row.updated_at = utcnow()
        await row.save(update_fields=["state", "updated_at"])
        markup = card_keyboard(card, row.id, _seen_by(row), None)
        await edit_buttons(self.bot, row.address, row.external_id, markup)

    async def _ask_comment(
        self, row: DeliveredCard, card: Card, recipient: Recipient, option_id: str
    ) -> tuple[str, bool]:
        prompt = await self.bot.send_message(
            chat_id=int(row.address),
            text=_("Reply to this message with what should change."),
            reply_to_message_id=int(row.external_id),
            reply_markup=ForceReply(selective=True),
        )
        row.state = {**row.state, "prompt": prompt.message_id, "option": option_id}
        row.updated_at = utcnow()
        await row.save(update_fields=["state", "updated_at"])
        return _("Reply to this message with what should change."), False

    async def _decide(
        self, row: DeliveredCard, card: Card, recipient: Recipient, response: dict[str, Any]
    ) -> tuple[str, bool]:
        try:
            decided = await self.context.respond(card, recipient, response, via=SURFACE)
        except AlreadyDecided:
            fresh = await load_card(card.workspace_id, card.id) or card
            await self._show_outcome(row, fresh)
            return already_decided_text(fresh), True
        except NotAllowedToAnswer:
            return not_allowed_to_answer_text(), True
        except (InvalidInput, NotAllowed) as error:
            return error.message, True
        except Conflict as error:
            if error.code == "already_voted":
                fresh = await load_card(card.workspace_id, card.id) or card
                await self._show_outcome(row, fresh)
            # Else action_changed: this message showed another action than the card's now.
            return error.message, True
        except (Gone, HubError):
            fresh = await load_card(card.workspace_id, card.id) or card
            await self._show_outcome(row, fresh)
            return outcome_text(fresh) or _("This card is no longer here."), True
        await self._show_outcome(row, decided)
        voted = voted_text(decided, row.user_id)
        if voted:  # a vote on a quorum card: the others still decide
            return voted, False
        return _("Thank you — recorded: %(outcome)s.", outcome=outcome_text(decided) or ""), False

    async def _on_reply(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, sender = update.effective_message, update.effective_user
        if message is None or sender is None or message.reply_to_message is None:
            return
        replied_to = message.reply_to_message.message_id
        account = await account_for_identity(SURFACE, str(sender.id))
        if account is None:
            return
        row = None
        for candidate in await DeliveredCard.filter(
            surface=SURFACE, user_id=account.user_id, address=str(message.chat_id)
        ):
            if (
                candidate.external_id == str(replied_to)
                or candidate.state.get("prompt") == replied_to
            ):
                row = candidate
                break
        if row is None:
            return
        recipient = await self.context.recipient(row.user_id, SURFACE)
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is None:
            return
        with speaking(recipient.language):
            await self._answer_reply(message, row, recipient, card)

    async def _answer_reply(
        self, message: Any, row: DeliveredCard, recipient: Recipient, card: Card
    ) -> None:
        if card.takes_text and card.input is not None and card.input.sensitive:
            # The secret should not sit in the chat history longer than it takes to read it.
            with contextlib.suppress(Exception):
                await message.delete()
        if not card.is_pending:
            await message.reply_text(outcome_text(card) or "")
            return
        if card.takes_text:
            response: dict[str, Any] = {"text": message.text or ""}
        elif row.state.get("option"):
            response = {
                "optionId": row.state["option"],
                "comment": message.text or "",
                **_bound(row),
            }
        else:
            return
        try:
            decided = await self.context.respond(card, recipient, response, via=SURFACE)
        except InvalidInput as error:
            retry = await self.bot.send_message(
                chat_id=message.chat_id,
                text=_(
                    "That doesn't fit: %(problem)s Reply to this message again.",
                    problem=error.message,
                ),
                reply_markup=ForceReply(selective=True),
            )
            row.state = {**row.state, "prompt": retry.message_id}
            row.updated_at = utcnow()
            await row.save(update_fields=["state", "updated_at"])
            return
        except AlreadyDecided:
            fresh = await load_card(card.workspace_id, card.id) or card
            await self._show_outcome(row, fresh)
            await message.reply_text(already_decided_text(fresh))
            return
        except NotAllowedToAnswer:
            await message.reply_text(not_allowed_to_answer_text())
            return
        except Conflict as error:  # action_changed: this message showed another action
            await message.reply_text(error.message)
            return
        except HubError:
            fresh = await load_card(card.workspace_id, card.id) or card
            await self._show_outcome(row, fresh)
            return
        await self._show_outcome(row, decided)
        await self.bot.send_message(
            chat_id=message.chat_id,
            text=_("Thank you — recorded: %(outcome)s.", outcome=outcome_text(decided) or ""),
        )


def _reminder(recipient: Recipient, card: Card) -> str:
    with speaking(recipient.language):
        return _("⏰ Reminder: “%(title)s” still waits for your answer.", title=card.title)


def _seen_by(row: DeliveredCard) -> dict[str, Any]:
    """The message's state with whom it is for: a voter's copy drops its buttons."""
    return {**row.state, "viewer": row.user_id}


def _bound(row: DeliveredCard) -> dict[str, Any]:
    """The hash of the action this message showed, for an answer given from it."""
    return {"actionHash": row.state["actionHash"]} if "actionHash" in row.state else {}
