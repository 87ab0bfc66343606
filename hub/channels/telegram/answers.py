"""What a person does in the chat to answer a card: presses its buttons, replies to it.

Each press or reply becomes ``ChannelContext.respond`` (a batch message's press,
``respond_to_batch`` through ``hub.channels.telegram.batches``); the core decides.

Rules every handler keeps: a press is always answered (``answerCallbackQuery``), even when
refused; only the Telegram user linked to the person the card was sent to may answer it
(checked against ``ChannelAccount`` on every press); a decided card's message is edited to
the outcome at once (every other surface gets the outbox's update). Every answer speaks
the language of the person the card was sent to.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Protocol

from telegram import ForceReply, Message, Update, User
from telegram.ext import ContextTypes
from tortoise.expressions import Subquery

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, load_card
from hub.channels.telegram.batches import BatchMessages
from hub.channels.telegram.callbacks import WITH_OPTION, CardAction, CardPress, is_batch, parse_card
from hub.channels.telegram.edits import note_pressed_message
from hub.channels.telegram.render import REQUEST_CHANGES
from hub.channels.wording import (
    already_decided_text,
    not_allowed_to_answer_text,
    outcome_text,
    voted_text,
)
from hub.core.approvals.permissions import NotAllowedToAnswer, may_answer
from hub.core.errors import AlreadyDecided, Conflict, HubError, InvalidInput
from hub.core.errors import Forbidden as NotAllowed  # telegram has a Forbidden of its own
from hub.core.notify.channel_accounts import account_for_identity
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)
SURFACE = "telegram"
# The text to answer a press with, and whether Telegram shows it as an alert to dismiss.
Answer = tuple[str, bool]


class CardMessages(Protocol):
    """What answering needs of the channel: its bot and context, its batch messages, and
    the drawing of a card's message."""

    @property
    def bot(self) -> Any: ...

    @property
    def context(self) -> ChannelContext: ...

    @property
    def batches(self) -> BatchMessages: ...

    async def show_outcome(self, row: DeliveredCard, card: Card) -> None:
        """Edit the card's message to ``card`` as it now is, without buttons."""

    async def show_buttons(self, row: DeliveredCard, card: Card) -> None:
        """Redraw only the message's buttons, for the state saved in ``row``."""


class ChatAnswers:
    """The Application's handlers for presses and replies."""

    def __init__(self, messages: CardMessages) -> None:
        self.messages = messages

    # --- presses --------------------------------------------------------------------------

    async def on_press(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        try:
            answer = await self._handle_press(query, str(query.data or ""))
        except Exception:  # the press is answered all the same, or its button keeps spinning
            logger.exception("handling a Telegram button press failed")
            answer = _gone()
        with contextlib.suppress(Exception):
            await query.answer(answer[0][:200], show_alert=answer[1])

    async def _handle_press(self, query: Any, data: str) -> Answer:
        if is_batch(data):
            return await self.messages.batches.on_press(query, data)
        press = parse_card(data)
        row = await DeliveredCard.filter(id=press.short_id, surface=SURFACE).first()
        if row is None:
            return _gone()
        note_pressed_message(row, query)
        recipient = await self.messages.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            return await self._act_on_press(query, row, recipient, press)

    async def _act_on_press(
        self, query: Any, row: DeliveredCard, recipient: Recipient, press: CardPress
    ) -> Answer:
        account = await account_for_identity(SURFACE, str(query.from_user.id))
        if account is None or account.user_id != row.user_id:
            return _("This card is for someone else."), True
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is None:
            return _gone()
        refusal = await self._refusal(row, card)
        if refusal is not None:
            return refusal
        if press.action in WITH_OPTION and not 0 <= press.position < len(card.options):
            return _gone()
        return await self._act(row, card, recipient, press)

    async def _refusal(self, row: DeliveredCard, card: Card) -> Answer | None:
        """Why the card takes no answer from this person any more, if it does not."""
        if not card.is_pending:
            await self.messages.show_outcome(row, card)
            if card.status == "resolved":
                return already_decided_text(card), True
            return outcome_text(card) or "", True
        if card.policy is not None and (vote := card.policy.vote_of(row.user_id)):
            await self.messages.show_outcome(row, card)
            option = card.option(str(vote.get("optionId")))
            return _("You already voted: %(label)s.", label=option.label if option else ""), True
        if not await may_answer(row.workspace_id, row.user_id):
            # Sent while they could answer; since made a viewer, or removed.
            return not_allowed_to_answer_text(), True
        return None

    async def _act(
        self, row: DeliveredCard, card: Card, recipient: Recipient, press: CardPress
    ) -> Answer:
        if press.action == CardAction.PICK:
            return await self._pick(row, card, recipient, press.position)
        if press.action == CardAction.CONFIRM:
            if row.state.get("confirm") != press.position:
                return _("Tap again to confirm."), True
            chosen = {"optionId": card.options[press.position].id, **_bound(row)}
            return await self._decide(row, card, recipient, chosen)
        if press.action == CardAction.CANCEL:
            row.state = {k: v for k, v in row.state.items() if k != "confirm"}
            await self._redraw(row, card)
            return _("Not answered."), False
        if press.action == CardAction.TICK:
            return await self._tick(row, card, press.position)
        if press.action == CardAction.SUBMIT:
            ticked = set(row.state.get("ticked") or [])
            ids = [o.id for i, o in enumerate(card.options) if i in ticked]
            return await self._decide(row, card, recipient, {"optionIds": ids})
        return _gone()

    async def _pick(
        self, row: DeliveredCard, card: Card, recipient: Recipient, index: int
    ) -> Answer:
        option = card.options[index]
        if card.type.value == "review" and option.id == REQUEST_CHANGES:
            return await self._ask_comment(row, option.id)
        if card.is_high_risk:
            row.state = {**row.state, "confirm": index}
            await self._redraw(row, card)
            return _("Tap again to confirm."), False
        return await self._decide(row, card, recipient, {"optionId": option.id, **_bound(row)})

    async def _tick(self, row: DeliveredCard, card: Card, index: int) -> Answer:
        ticked = set(row.state.get("ticked") or [])
        ticked ^= {index}
        row.state = {**row.state, "ticked": sorted(ticked)}
        await self._redraw(row, card)
        return _("Ticked: %(count)s", count=len(ticked)), False

    async def _redraw(self, row: DeliveredCard, card: Card) -> None:
        await _save_state(row)
        await self.messages.show_buttons(row, card)

    async def _ask_comment(self, row: DeliveredCard, option_id: str) -> Answer:
        """A review's "request changes" waits for the comment, given by replying."""
        prompt = await self.messages.bot.send_message(
            chat_id=int(row.address),
            text=_("Reply to this message with what should change."),
            reply_to_message_id=int(row.external_id),
            reply_markup=ForceReply(selective=True),
        )
        row.state = {**row.state, "prompt": prompt.message_id, "option": option_id}
        await _save_state(row)
        return _("Reply to this message with what should change."), False

    async def _decide(
        self, row: DeliveredCard, card: Card, recipient: Recipient, response: dict[str, Any]
    ) -> Answer:
        try:
            decided = await self.messages.context.respond(card, recipient, response, via=SURFACE)
        except HubError as error:
            return await self._press_refused(row, card, error)
        await self.messages.show_outcome(row, decided)
        voted = voted_text(decided, row.user_id)
        if voted:  # a vote on a quorum card: the others still decide
            return voted, False
        return _recorded(decided), False

    async def _press_refused(self, row: DeliveredCard, card: Card, error: HubError) -> Answer:
        """What to say when the core refused the press, the message redrawn when the card
        changed under it."""
        if isinstance(error, AlreadyDecided):
            return already_decided_text(await self._show_fresh(row, card)), True
        if isinstance(error, NotAllowedToAnswer):
            return not_allowed_to_answer_text(), True
        if isinstance(error, InvalidInput | NotAllowed):
            return error.message, True
        if isinstance(error, Conflict):
            if error.code == "already_voted":
                await self._show_fresh(row, card)
            # Else action_changed: this message showed another action than the card's now.
            return error.message, True
        fresh = await self._show_fresh(row, card)
        return outcome_text(fresh) or _("This card is no longer here."), True

    async def _show_fresh(self, row: DeliveredCard, card: Card) -> Card:
        """The card as it is now, shown in its message: it was decided or closed since."""
        fresh = await load_card(card.workspace_id, card.id) or card
        await self.messages.show_outcome(row, fresh)
        return fresh

    # --- replies --------------------------------------------------------------------------

    async def on_reply(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, sender = update.effective_message, update.effective_user
        if message is None or sender is None:
            return
        row = await _replied_to(message, sender) if message.reply_to_message else None
        if row is None:  # not a reply, or a reply to no card: say how to answer one
            await self._stray(message, sender)
            return
        recipient = await self.messages.context.recipient(row.user_id, SURFACE)
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is None:
            return
        with speaking(recipient.language):
            await self._answer_reply(message, row, recipient, card)

    async def _stray(self, message: Any, sender: User) -> None:
        """A text that answers no card: silence would read as "recorded", so the person is
        told how a card is answered here, as a reply to the card that waits for a text when
        there is one (one tap to answer it)."""
        account = await account_for_identity(SURFACE, str(sender.id))
        if account is None:
            language = "zh-Hans" if (sender.language_code or "").startswith("zh") else "en"
            with speaking(language):
                await message.reply_text(
                    _(
                        "This chat is not linked to LineUp Hub yet: open Settings → Telegram "
                        "in the hub and press Link Telegram."
                    )
                )
            return
        recipient = await self.messages.context.recipient(account.user_id, SURFACE)
        with speaking(recipient.language):
            waiting = await _waiting_for_text(account.user_id, str(message.chat_id))
            if waiting is None:
                await message.reply_text(
                    _(
                        "That message answers no card. To answer a card, use the buttons "
                        "under it; a card that asks for a text takes a reply to its message "
                        "(swipe it left, or long-press it and choose Reply)."
                    )
                )
                return
            row, card = waiting
            await self.messages.bot.send_message(
                chat_id=message.chat_id,
                text=_(
                    "That message answers no card. To answer “%(title)s”, reply to this "
                    "card's message (swipe it left, or long-press it and choose Reply).",
                    title=card.title,
                ),
                reply_to_message_id=int(row.state.get("prompt") or row.external_id),
            )

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
        response = _reply_response(message, row, card)
        if response is None:  # a reply to a card answered by its buttons
            await message.reply_text(_("This card is answered with the buttons under it."))
            return
        try:
            decided = await self.messages.context.respond(card, recipient, response, via=SURFACE)
        except HubError as error:
            await self._reply_refused(message, row, card, error)
            return
        await self.messages.show_outcome(row, decided)
        await self.messages.bot.send_message(chat_id=message.chat_id, text=_recorded(decided))

    async def _reply_refused(
        self, message: Any, row: DeliveredCard, card: Card, error: HubError
    ) -> None:
        """Say why the core refused the reply; an answer that does not fit is asked again."""
        if isinstance(error, InvalidInput):
            await self._ask_again(message, row, error)
        elif isinstance(error, AlreadyDecided):
            await message.reply_text(already_decided_text(await self._show_fresh(row, card)))
        elif isinstance(error, NotAllowedToAnswer):
            await message.reply_text(not_allowed_to_answer_text())
        elif isinstance(error, Conflict):  # action_changed: this message showed another action
            await message.reply_text(error.message)
        else:  # closed meanwhile (expired, withdrawn: answered in the terminal): say so
            closed = outcome_text(await self._show_fresh(row, card))
            if closed:
                await message.reply_text(closed)

    async def _ask_again(self, message: Any, row: DeliveredCard, error: InvalidInput) -> None:
        retry = await self.messages.bot.send_message(
            chat_id=message.chat_id,
            text=_(
                "That doesn't fit: %(problem)s Reply to this message again.",
                problem=error.message,
            ),
            reply_markup=ForceReply(selective=True),
        )
        # A reply to the new prompt answers the same card.
        row.state = {**row.state, "prompt": retry.message_id}
        await _save_state(row)


async def _replied_to(message: Message, sender: User) -> DeliveredCard | None:
    """The card a reply answers: its own message, or a prompt sent about it."""
    account = await account_for_identity(SURFACE, str(sender.id))
    if account is None or message.reply_to_message is None:
        return None
    replied_to = message.reply_to_message.message_id
    for row in await DeliveredCard.filter(
        surface=SURFACE, user_id=account.user_id, address=str(message.chat_id)
    ):
        if row.external_id == str(replied_to) or row.state.get("prompt") == replied_to:
            return row
    return None


async def _waiting_for_text(user_id: str, chat: str) -> tuple[DeliveredCard, Card] | None:
    """The newest pending card in ``chat`` that waits for a typed reply: an input card, or
    one whose "request changes" asked for the comment."""
    # Only the chat's cards still open: a chat holds every card it was ever sent.
    open_cards = Interaction.filter(status=InteractionStatus.PENDING).values("id")
    rows = (
        await DeliveredCard.filter(
            surface=SURFACE,
            user_id=user_id,
            address=chat,
            interaction_id__in=Subquery(open_cards),
        )
        .exclude(external_id="")
        .order_by("-created_at")
    )
    for row in rows:
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is not None and card.is_pending and (card.takes_text or row.state.get("option")):
            return row, card
    return None


def _reply_response(message: Any, row: DeliveredCard, card: Card) -> dict[str, Any] | None:
    """The answer a reply gives: an input card's text, or the comment a "request changes"
    press asked for; None when the card asked for no reply."""
    if card.takes_text:
        return {"text": message.text or ""}
    if row.state.get("option"):
        return {"optionId": row.state["option"], "comment": message.text or "", **_bound(row)}
    return None


async def _save_state(row: DeliveredCard) -> None:
    row.updated_at = utcnow()
    await row.save(update_fields=["state", "updated_at"])


def _bound(row: DeliveredCard) -> dict[str, Any]:
    """The hash of the action this message showed, for an answer given from it."""
    return {"actionHash": row.state["actionHash"]} if "actionHash" in row.state else {}


def _recorded(decided: Card) -> str:
    return _("Thank you — recorded: %(outcome)s.", outcome=outcome_text(decided) or "")


def _gone() -> Answer:
    return _("This card is no longer here."), True
