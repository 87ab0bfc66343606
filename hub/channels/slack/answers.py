"""What a person does in Slack to answer a card: presses its buttons (a modal's submission
is ``hub.channels.slack.submissions``, on the same rules and helpers).

Each press or submission becomes ``ChannelContext.respond`` (a batch message's press,
``respond_to_batch`` through ``hub.channels.slack.batches``); the core decides, the first
answer from any surface wins.

Rules every handler keeps: only the Slack user linked to the person the card was sent to
may answer it (checked against ``ChannelAccount`` on every press and submission); anyone
else is told why in an ephemeral message only they see, and nothing changes; a decided
card's message is redrawn to the outcome at once (every other surface gets the outbox's
update). Every answer carries Slack's ``trigger_id`` as its idempotency key, so a request
that reaches the hub twice decides once. Everything speaks the language of the person the
card was sent to.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, load_card
from hub.channels.slack import modals
from hub.channels.slack.actions import (
    WITH_OPTION,
    CardAction,
    CardPress,
    Refused,
    is_batch,
    is_card,
    parse_card,
)
from hub.channels.slack.batches import BatchMessages
from hub.channels.slack.blocks import REQUEST_CHANGES, escape
from hub.channels.slack.web_api import SlackApi
from hub.channels.wording import already_decided_text, not_allowed_to_answer_text, outcome_text
from hub.core.approvals.permissions import NotAllowedToAnswer, may_answer
from hub.core.errors import AlreadyDecided, Conflict, Forbidden, HubError, InvalidInput
from hub.core.notify.channel_accounts import account_for_identity
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)
SURFACE = "slack"


class CardMessages(Protocol):
    """What answering needs of the channel: its API and context, its batch messages, and
    the drawing of a card's message."""

    @property
    def api(self) -> SlackApi: ...

    @property
    def context(self) -> ChannelContext: ...

    @property
    def batches(self) -> BatchMessages: ...

    async def show(self, row: DeliveredCard, card: Card) -> None:
        """Redraw the card's message for ``card`` as it is and the state saved in ``row``."""


class SlackAnswers:
    def __init__(self, messages: CardMessages) -> None:
        self.messages = messages

    @property
    def api(self) -> SlackApi:
        return self.messages.api

    # --- presses --------------------------------------------------------------------------

    async def on_press(self, payload: dict[str, Any]) -> None:
        actions = payload.get("actions") or []
        if not actions:
            return
        action = actions[0]
        action_id = str(action.get("action_id") or "")
        presser = str((payload.get("user") or {}).get("id") or "")
        channel = _channel_of(payload)
        try:
            if is_batch(action_id):
                await self.messages.batches.on_press(payload, action_id, presser)
            elif is_card(action_id):
                await self._press(payload, action, parse_card(action_id), presser)
        except Refused as refused:
            await self._tell(channel, presser, str(refused))
        except Exception:
            logger.exception("handling a Slack button press failed")
            await self._tell(channel, presser, _("This card is no longer here."))

    async def _tell(self, channel: str, user: str, text: str) -> None:
        if channel and user and text:
            try:
                await self.api.tell(channel, user, escape(text))
            except Exception as error:  # the refusal changed nothing either way
                logger.info("could not tell %s in Slack why: %s", user, error)

    async def _press(
        self, payload: dict[str, Any], action: dict[str, Any], press: CardPress, presser: str
    ) -> None:
        row = await DeliveredCard.filter(id=press.short_id, surface=SURFACE).first()
        if row is None:
            raise Refused(_("This card is no longer here."))
        _note_message(row, payload)
        recipient = await self.messages.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            try:
                await self._act_on_press(payload, action, row, recipient, press, presser)
            except Refused as refused:  # said in the card's language, not the default
                raise Refused(str(refused)) from None

    async def _act_on_press(
        self,
        payload: dict[str, Any],
        action: dict[str, Any],
        row: DeliveredCard,
        recipient: Recipient,
        press: CardPress,
        presser: str,
    ) -> None:
        await check_presser(row, presser)
        if press.action == CardAction.WEB:
            return  # a link button: the browser opened it
        card = await self.pending_card(row)
        if press.action in WITH_OPTION and not 0 <= press.position < len(card.options):
            raise Refused(_("This card is no longer here."))
        key = idempotency_key(payload)
        if press.action == CardAction.PICK:
            await self._pick(payload, row, card, recipient, press.position, key)
        elif press.action == CardAction.CONFIRM:
            if row.state.get("confirm") != press.position:
                await self.messages.show(row, card)
                raise Refused(_("Tap again to confirm."))
            answer = {"optionId": card.options[press.position].id, **bound(row)}
            await self._decide(row, card, recipient, answer, key)
        elif press.action == CardAction.CANCEL:
            row.state = {k: v for k, v in row.state.items() if k != "confirm"}
            await self._redraw(row, card)
        elif press.action == CardAction.TICK:
            ticked = _ticked(action.get("selected_options") or [], len(card.options))
            row.state = {**row.state, "ticked": ticked}
            await save_state(row)
        elif press.action == CardAction.SUBMIT:
            ticked = _ticks_shown(payload, row, len(card.options))
            ids = [o.id for i, o in enumerate(card.options) if i in ticked]
            await self._decide(row, card, recipient, {"optionIds": ids}, key)
        elif press.action == CardAction.ANSWER:
            await self._open(payload, modals.input_modal(card, row.id))
        elif press.action == CardAction.EDIT:
            if card.action is None or not card.action.editable:
                raise Refused(_("This card is no longer here."))
            approving = modals.approving_option(card)
            await self._open(payload, modals.edit_modal(card, row.id, approving))
        else:
            raise Refused(_("This card is no longer here."))

    async def pending_card(self, row: DeliveredCard) -> Card:
        """The card, still waiting for this person's answer; else the message is redrawn
        to what it is now and the press refused with why."""
        card = await load_card(row.workspace_id, row.interaction_id)
        if card is None:
            raise Refused(_("This card is no longer here."))
        if not card.is_pending:
            await self.messages.show(row, card)
            if card.status == "resolved":
                raise Refused(already_decided_text(card))
            raise Refused(outcome_text(card) or "")
        if card.policy is not None and (vote := card.policy.vote_of(row.user_id)):
            await self.messages.show(row, card)
            option = card.option(str(vote.get("optionId")))
            raise Refused(_("You already voted: %(label)s.", label=option.label if option else ""))
        if not await may_answer(row.workspace_id, row.user_id):
            # Sent while they could answer; since made a viewer, or removed.
            raise Refused(not_allowed_to_answer_text())
        return card

    async def _pick(
        self,
        payload: dict[str, Any],
        row: DeliveredCard,
        card: Card,
        recipient: Recipient,
        index: int,
        key: str,
    ) -> None:
        option = card.options[index]
        if card.type.value == "review" and option.id == REQUEST_CHANGES:
            await self._open(payload, modals.comment_modal(card, row.id, option.id))
            return
        if card.is_high_risk:  # the second, deliberate press: the message asks for it
            row.state = {**row.state, "confirm": index}
            await self._redraw(row, card)
            return
        await self._decide(row, card, recipient, {"optionId": option.id, **bound(row)}, key)

    async def _open(self, payload: dict[str, Any], view: dict[str, Any]) -> None:
        await self.api.call(
            "views_open", trigger_id=str(payload.get("trigger_id") or ""), view=view
        )

    async def _redraw(self, row: DeliveredCard, card: Card) -> None:
        await save_state(row)
        await self.messages.show(row, card)

    async def _decide(
        self,
        row: DeliveredCard,
        card: Card,
        recipient: Recipient,
        response: dict[str, Any],
        key: str,
    ) -> Card:
        try:
            decided = await self.messages.context.respond(
                card, recipient, response, via=SURFACE, idempotency_key=key or None
            )
        except HubError as error:
            raise Refused(await self.refusal(row, card, error)) from None
        await self.show_decided(row, decided)
        return decided

    async def show_decided(self, row: DeliveredCard, decided: Card) -> None:
        """The answer went through: the message and the batches listing it say so."""
        row.state = {k: v for k, v in row.state.items() if k not in ("confirm", "edits")}
        await save_state(row)
        try:
            await self.messages.show(row, decided)
            await self.messages.batches.refresh(row.user_id, decided)
        except Exception as error:  # decided all the same: the outbox's update redraws it
            logger.info("redrawing a decided card's Slack message failed: %s", error)

    async def refusal(self, row: DeliveredCard, card: Card, error: HubError) -> str:
        """What to say when the core refused, the message redrawn when the card changed."""
        if isinstance(error, AlreadyDecided):
            return already_decided_text(await self._show_fresh(row, card))
        if isinstance(error, NotAllowedToAnswer):
            return not_allowed_to_answer_text()
        if isinstance(error, InvalidInput | Forbidden):
            return error.message
        if isinstance(error, Conflict):
            if error.code == "already_voted":
                await self._show_fresh(row, card)
            return error.message  # else action_changed: the message showed another action
        fresh = await self._show_fresh(row, card)
        return outcome_text(fresh) or _("This card is no longer here.")

    async def _show_fresh(self, row: DeliveredCard, card: Card) -> Card:
        fresh = await load_card(card.workspace_id, card.id) or card
        await self.messages.show(row, fresh)
        return fresh


async def check_presser(row: DeliveredCard, presser: str) -> None:
    """Only the Slack account linked to the person the card was sent to answers it."""
    account = await account_for_identity(SURFACE, presser) if presser else None
    if account is None or account.user_id != row.user_id:
        raise Refused(_("This card is for someone else."))


def _note_message(row: DeliveredCard, payload: dict[str, Any]) -> None:
    """Pressed before the delivery finished recording where the message is: the press says
    it, so a redraw after the press edits the right message."""
    container = payload.get("container") or {}
    if not row.external_id and container.get("message_ts"):
        row.address = str(container.get("channel_id") or _channel_of(payload))
        row.external_id = str(container["message_ts"])


def _channel_of(payload: dict[str, Any]) -> str:
    channel = (payload.get("channel") or {}).get("id")
    return str(channel or (payload.get("container") or {}).get("channel_id") or "")


def idempotency_key(payload: dict[str, Any]) -> str:
    """One answer per Slack interaction, wherever and however often it arrives."""
    trigger = str(payload.get("trigger_id") or "")
    return f"slack:{trigger}" if trigger else ""


def _ticked(selected: list[dict[str, Any]], count: int) -> list[int]:
    values = {str(option.get("value")) for option in selected}
    return sorted(i for i in range(count) if str(i) in values)


def _ticks_shown(payload: dict[str, Any], row: DeliveredCard, count: int) -> set[int]:
    """The ticks the message showed when Submit was pressed: Slack sends the checkboxes'
    state with the press; the ticks saved as they changed otherwise."""
    values = (payload.get("state") or {}).get("values") or {}
    for block in values.values():
        for element in block.values():
            if element.get("type") == "checkboxes":
                return set(_ticked(element.get("selected_options") or [], count))
    return set(row.state.get("ticked") or [])


async def save_state(row: DeliveredCard) -> None:
    row.updated_at = utcnow()
    await row.save(update_fields=["state", "updated_at"])


def bound(row: DeliveredCard) -> dict[str, Any]:
    """The hash of the action this message showed, for an answer given from it."""
    return {"actionHash": row.state["actionHash"]} if "actionHash" in row.state else {}
