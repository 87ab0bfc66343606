"""What a press on a card does: the person's answer, through the core's one decision path.

A press arrives as a ``Callback`` (``hub.channels.feishu.inbound``: token checked, never a
replay) and is answered with a ``Reply``: a toast, and the card as it now is, which Feishu
shows at once in place of the pressed one.

Rules every press keeps: only the Feishu user linked to the person the card was sent to
may answer it (checked against ``ChannelAccount`` on every press; anyone else is told so and
nothing changes); a high-risk choice takes a second, deliberate press; a form's answer is
checked by the core, and one that does not fit is refused with the reason while the form
keeps what was typed; an answer on a card decided elsewhere meanwhile is told who decided,
and the card turns to that outcome. Every answer speaks the language of the person the card
was sent to.
"""

from __future__ import annotations

from typing import Any, Protocol

from hub.channels.action_view import FIELD_PREFIX, edits_from_form
from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, load_card
from hub.channels.feishu.inbound import Callback, Reply
from hub.channels.feishu.presses import WITH_OPTION, CardAction, Press, parse
from hub.channels.feishu.render import (
    CHOICES_FIELD,
    COMMENT_FIELD,
    REQUEST_CHANGES,
    TEXT_FIELD,
    edit_field_name,
)
from hub.channels.wording import (
    already_decided_text,
    not_allowed_to_answer_text,
    outcome_text,
    voted_text,
)
from hub.core.approvals.permissions import NotAllowedToAnswer, may_answer
from hub.core.errors import AlreadyDecided, Conflict, Forbidden, HubError, InvalidInput
from hub.core.notify.channel_accounts import account_for_identity
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow
from hub.protocol.interactions import declines

SURFACE = "feishu"


class CardMessages(Protocol):
    """What answering needs of the channel."""

    @property
    def context(self) -> ChannelContext: ...

    def draw(self, row: DeliveredCard, card: Card, recipient: Recipient) -> dict[str, Any]:
        """The card's message for the state saved in ``row``."""

    async def on_batch_press(self, callback: Callback, press: Press) -> Reply:
        """A press on a batch message."""


class CardAnswers:
    def __init__(self, messages: CardMessages) -> None:
        self.messages = messages

    async def on_press(self, callback: Callback) -> Reply:
        press = parse(callback.value, callback.form)
        if press is None:
            return _gone()
        if press.batch_id:
            return await self.messages.on_batch_press(callback, press)
        row = await DeliveredCard.filter(id=press.card_id, surface=SURFACE).first()
        if row is None:
            return _gone()
        if not row.external_id and callback.message_id:  # pressed before its send was noted
            row.address, row.external_id = callback.chat_id, callback.message_id
        recipient = await self.messages.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            account = await account_for_identity(SURFACE, callback.open_id)
            if account is None or account.user_id != row.user_id:
                return Reply(_("This card is for someone else."), "error")
            card = await load_card(row.workspace_id, row.interaction_id)
            if card is None:
                return _gone()
            refusal = await self._refusal(row, card, recipient)
            if refusal is not None:
                return refusal
            if press.action in WITH_OPTION and not 0 <= press.position < len(card.options):
                return _gone()
            return await self._act(row, card, recipient, press)

    async def _refusal(self, row: DeliveredCard, card: Card, recipient: Recipient) -> Reply | None:
        """Why the card takes no answer from this person any more, if it does not."""
        if not card.is_pending:
            said = already_decided_text(card) if card.status == "resolved" else outcome_text(card)
            return Reply(said or "", "warning", self._drawn(row, card, recipient))
        if card.policy is not None and (vote := card.policy.vote_of(row.user_id)):
            option = card.option(str(vote.get("optionId")))
            said = _("You already voted: %(label)s.", label=option.label if option else "")
            return Reply(said, "warning", self._drawn(row, card, recipient))
        if not await may_answer(row.workspace_id, row.user_id):
            return Reply(not_allowed_to_answer_text(), "error")
        return None

    async def _act(
        self, row: DeliveredCard, card: Card, recipient: Recipient, press: Press
    ) -> Reply:
        if press.action == CardAction.PICK:
            return await self._pick(row, card, recipient, press)
        if press.action == CardAction.CONFIRM:
            confirming = row.state.get("confirm")
            if confirming != press.position:
                return Reply(_("Tap again to confirm."), "warning")
            answer = _answer(card, press.position, row.state.get("form") or {}, row.state)
            return await self._decide(row, card, recipient, answer)
        if press.action == CardAction.CANCEL:
            row.state = {k: v for k, v in row.state.items() if k not in ("confirm", "form")}
            await _save_state(row)
            return Reply(_("Not answered."), "info", self._drawn(row, card, recipient))
        if press.action == CardAction.SUBMIT:
            return await self._decide(row, card, recipient, _submitted(card, press.form))
        return _gone()

    async def _pick(
        self, row: DeliveredCard, card: Card, recipient: Recipient, press: Press
    ) -> Reply:
        option = card.options[press.position]
        comment = str(press.form.get(COMMENT_FIELD) or "").strip()
        if card.type.value == "review" and option.id == REQUEST_CHANGES and not comment:
            return Reply(_("Write what should change in the comment, then press again."), "error")
        if card.is_high_risk:
            row.state = {**row.state, "confirm": press.position, "form": press.form}
            await _save_state(row)
            return Reply(_("Tap again to confirm."), "warning", self._drawn(row, card, recipient))
        answer = _answer(card, press.position, press.form, row.state)
        return await self._decide(row, card, recipient, answer)

    async def _decide(
        self, row: DeliveredCard, card: Card, recipient: Recipient, answer: dict[str, Any]
    ) -> Reply:
        try:
            decided = await self.messages.context.respond(card, recipient, answer, via=SURFACE)
        except HubError as error:
            return await self._refused(row, card, recipient, error)
        row.state = {k: v for k, v in row.state.items() if k not in ("confirm", "form")}
        await _save_state(row)
        voted = voted_text(decided, row.user_id)
        toast = voted or _("Thank you — recorded: %(outcome)s.", outcome=outcome_text(decided))
        return Reply(toast, "success", self._drawn(row, decided, recipient))

    async def _refused(
        self, row: DeliveredCard, card: Card, recipient: Recipient, error: HubError
    ) -> Reply:
        """What to say when the core refused the answer; the card redrawn when it changed
        under the press, left as it is (with what was typed) when the answer did not fit."""
        if isinstance(error, InvalidInput):
            return Reply(_("That doesn't fit: %(problem)s", problem=error.message), "error")
        if isinstance(error, NotAllowedToAnswer):
            return Reply(not_allowed_to_answer_text(), "error")
        if isinstance(error, Forbidden):
            return Reply(error.message, "error")
        fresh = await load_card(card.workspace_id, card.id) or card
        if isinstance(error, AlreadyDecided):
            return Reply(already_decided_text(fresh), "warning", self._drawn(row, fresh, recipient))
        if isinstance(error, Conflict):  # action_changed, already_voted
            return Reply(error.message, "warning", self._drawn(row, fresh, recipient))
        said = outcome_text(fresh) or _("This card is no longer here.")
        return Reply(said, "warning", self._drawn(row, fresh, recipient))

    def _drawn(self, row: DeliveredCard, card: Card, recipient: Recipient) -> dict[str, Any]:
        return self.messages.draw(row, card, recipient)


def _answer(
    card: Card, position: int, form: dict[str, Any], state: dict[str, Any]
) -> dict[str, Any]:
    """The answer of option ``position``, with what its form held: a review's comment, an
    action's edited fields (bound to the action this message showed)."""
    option = card.options[position]
    answer: dict[str, Any] = {"optionId": option.id}
    comment = str(form.get(COMMENT_FIELD) or "").strip()
    if comment:
        answer["comment"] = comment
    if "actionHash" in state:
        answer["actionHash"] = state["actionHash"]
    if card.proposed_action is not None and card.action is not None:
        sent = {
            FIELD_PREFIX + field.name: str(form[edit_field_name(position_)])
            for position_, field in enumerate(card.action.fields)
            if field.editable and edit_field_name(position_) in form
        }
        edits = edits_from_form(card.proposed_action, sent)
        changed = {k: v for k, v in edits.items() if v != card.proposed_action.fields[k]}
        if changed and not declines(option.id, option.style):
            answer["action"] = changed
    return answer


def _submitted(card: Card, form: dict[str, Any]) -> dict[str, Any]:
    """The answer a submitted form gives: a typed text, or the options chosen."""
    if card.takes_text:
        return {"text": str(form.get(TEXT_FIELD) or "")}
    chosen = form.get(CHOICES_FIELD) or []
    if not isinstance(chosen, list):
        chosen = [chosen]
    positions = {int(p) for p in chosen if str(p).isdigit() and int(p) < len(card.options)}
    return {"optionIds": [o.id for i, o in enumerate(card.options) if i in positions]}


async def _save_state(row: DeliveredCard) -> None:
    row.updated_at = utcnow()
    await row.save(update_fields=["state", "updated_at"])


def _gone() -> Reply:
    return Reply(_("This card is no longer here."), "error")
