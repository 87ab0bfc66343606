"""A modal's submission: an input card's text, a review's comment, an action's edits.

The modal was opened by a press (``hub.channels.slack.answers``); its submission
(``view_submission``) is answered at once, and the answer is what Slack shows next: an
answer that does not fit is shown on the field that must change (``response_action:
errors``) and decides nothing; a high-risk edited approval first shows what changed and
asks once more (``response_action: update``); a refusal replaces the modal with why; an
answer that went through closes it, and the card's message is redrawn to the outcome.
The same rules as a press hold: only the linked person answers, the core decides, once.
"""

from __future__ import annotations

from typing import Any

from hub.channels.action_view import ActionField, edits_from_form
from hub.channels.base import Recipient
from hub.channels.cards import Card
from hub.channels.slack import modals
from hub.channels.slack.actions import ModalKind, Refused
from hub.channels.slack.answers import (
    SURFACE,
    SlackAnswers,
    bound,
    check_presser,
    idempotency_key,
    save_state,
)
from hub.core.errors import HubError, InvalidInput
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.interactions import declines


class ModalSubmissions:
    def __init__(self, answers: SlackAnswers) -> None:
        self.answers = answers

    async def on_submission(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """A modal's submission → what Slack shows next: None closes the modal."""
        view = payload.get("view") or {}
        kind = str(view.get("callback_id") or "")
        metadata = modals.metadata_of(view)
        row = await DeliveredCard.filter(
            id=str(metadata.get("card") or ""), surface=SURFACE
        ).first()
        if row is None:
            return _closing(_("This card is no longer here."))
        recipient = await self.answers.messages.context.recipient(row.user_id, SURFACE)
        presser = str((payload.get("user") or {}).get("id") or "")
        with speaking(recipient.language):
            try:
                await check_presser(row, presser)
                card = await self.answers.pending_card(row)
            except Refused as refused:
                return _closing(str(refused))
            try:
                return await self._submitted(payload, view, kind, metadata, row, card, recipient)
            except Refused as refused:
                return _closing(str(refused))
            except InvalidInput as error:  # shown on the field to change; nothing decided
                return _errors(view, card, error)

    async def _submitted(
        self,
        payload: dict[str, Any],
        view: dict[str, Any],
        kind: str,
        metadata: dict[str, Any],
        row: DeliveredCard,
        card: Card,
        recipient: Recipient,
    ) -> dict[str, Any] | None:
        key = idempotency_key(payload)
        option = str(metadata.get("option") or "")
        if kind == ModalKind.INPUT:
            answer: dict[str, Any] = {"text": modals.typed_text(view)}
        elif kind == ModalKind.COMMENT:
            answer = {"optionId": option, "comment": modals.typed_text(view), **bound(row)}
        elif kind in (ModalKind.EDIT, ModalKind.EDIT_CONFIRM) and card.action is not None:
            form = modals.typed_fields(view, card.action) if kind == ModalKind.EDIT else {}
            if kind == ModalKind.EDIT_CONFIRM:
                form = dict(row.state.get("edits") or {})
            elif card.is_high_risk:  # the second, deliberate step shows what changed
                row.state = {**row.state, "edits": form}
                await save_state(row)
                changed = _changed(card, form)
                confirm = modals.confirm_edit_modal(card, row.id, option, changed)
                return {"response_action": "update", "view": confirm}
            answer = {"optionId": option, **bound(row)}
            if card.proposed_action is not None:
                edits = edits_from_form(card.proposed_action, form)
                if edits and not declines(option, None):
                    answer["action"] = edits
        else:
            return _closing(_("This card is no longer here."))
        if kind != ModalKind.INPUT and card.option(option) is None:
            return _closing(_("This card is no longer here."))
        try:
            decided = await self.answers.messages.context.respond(
                card, recipient, answer, via=SURFACE, idempotency_key=key or None
            )
        except InvalidInput:
            raise
        except HubError as error:
            return _closing(await self.answers.refusal(row, card, error))
        await self.answers.show_decided(row, decided)
        return None


def _changed(card: Card, form: dict[str, str]) -> list[ActionField]:
    if card.proposed_action is None:
        return []
    edits = edits_from_form(card.proposed_action, form)
    proposed = card.proposed_action.fields
    return [ActionField(k, v, True) for k, v in edits.items() if v != proposed.get(k)]


def _closing(text: str) -> dict[str, Any]:
    """A modal that says ``text`` and takes nothing more."""
    return {"response_action": "update", "view": modals.notice_modal(text)}


def _errors(view: dict[str, Any], card: Card, error: InvalidInput) -> dict[str, Any]:
    kind = str(view.get("callback_id") or "")
    block = modals.ANSWER_BLOCK
    if kind == ModalKind.EDIT and card.action is not None:
        # The core's refusal names the field; the longest name it holds is the one meant.
        names = sorted((f.name for f in card.action.editable), key=len, reverse=True)
        named = next((name for name in names if name in error.message), None)
        block = modals.field_block(card.action, named)
    elif kind == ModalKind.EDIT_CONFIRM:
        return _closing(error.message)
    return {"response_action": "errors", "errors": {block: error.message[:2000]}}
