"""One Telegram message that answers a task's pending approvals together.

Once two or more approvals of one task have reached a person's chat, a batch message lists
them with "Approve all (N)" / "Reject all (N)". A press decides exactly the cards that
message listed, through ``ChannelContext.respond_to_batch`` (so each is checked and
recorded as if answered alone); a newer card of the task brings a new batch message and
retires the old one. If any listed card is high risk, "approve all" first asks for a
confirming tap, as a single high-risk card does. The message is edited to each card's
outcome as they are decided, here or anywhere else; the single cards' messages are edited
by the outbox's "decided" updates like any other.

Callback data is ``batch:<id>:<action>`` (``hub.channels.telegram.callbacks``): the
``DeliveredBatch``'s opaque id and a ``BatchAction`` code.
"""

from __future__ import annotations

import html
import secrets
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card
from hub.channels.delivered_batches import batch_items, current_batch, listed_cards, recorded
from hub.channels.telegram.callbacks import BatchAction, batch_data, parse_batch
from hub.channels.telegram.edits import edit_message, note_pressed_message
from hub.channels.wording import outcome_text, risk_text
from hub.core.errors import HubError
from hub.core.notify.channel_accounts import account_for_identity
from hub.core.store.models import Task
from hub.core.store.notification_models import DeliveredBatch, DeliveredCard
from hub.core.work.batch_answers import (
    APPROVE,
    REJECT,
    batchable_cards,
)
from hub.core.work.interactions import list_interactions
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

SURFACE = "telegram"


class BatchMessages:
    def __init__(self, bot: Any, context: ChannelContext) -> None:
        self.bot = bot
        self.context = context

    # --- offering and redrawing -----------------------------------------------------------

    async def offer(self, recipient: Recipient, card: Card) -> None:
        """After ``card`` reached the chat: offer its task's approvals together, if several
        wait there. Safe to repeat (a retried delivery offers nothing new)."""
        with speaking(recipient.language):
            await self._offer(recipient, card)

    async def _offer(self, recipient: Recipient, card: Card) -> None:
        if card.task_id is None or not card.is_pending:
            return
        waiting = batchable_cards(
            await list_interactions(card.workspace_id, task_id=card.task_id, pending_only=True)
        )
        in_chat = {
            str(interaction_id)
            for interaction_id in await DeliveredCard.filter(
                surface=SURFACE,
                user_id=recipient.user_id,
                interaction_id__in=[i.id for i in waiting],
            )
            .exclude(external_id="")
            .values_list("interaction_id", flat=True)
        }
        listed = [i.id for i in waiting if i.id in in_chat]
        if len(listed) < 2:
            return
        current = await current_batch(SURFACE, recipient.user_id, card.task_id)
        if current is not None and current.interaction_ids == listed:
            if not current.external_id:  # created, but the send did not go through
                await self._send(current, recipient)
            return
        if current is not None:
            current.state = {"replaced": True}
            await self._draw(current)
        now = utcnow()
        row = await DeliveredBatch.create(
            id=secrets.token_urlsafe(6),
            surface=SURFACE,
            user_id=recipient.user_id,
            workspace_id=card.workspace_id,
            task_id=card.task_id,
            interaction_ids=listed,
            state={},
            created_at=now,
            updated_at=now,
        )
        await self._send(row, recipient)

    async def refresh(self, recipient: Recipient, card: Card) -> None:
        """``card`` was decided (anywhere): redraw the batch messages that list it."""
        if card.task_id is None:
            return
        for row in await DeliveredBatch.filter(
            surface=SURFACE, user_id=recipient.user_id, task_id=card.task_id
        ).exclude(external_id=""):
            if card.id in row.interaction_ids and not row.state.get("replaced"):
                with speaking(recipient.language):
                    await self._draw(row)

    async def _send(self, row: DeliveredBatch, recipient: Recipient) -> None:
        body, markup = await self._render(row)
        message = await self.bot.send_message(
            chat_id=int(recipient.address or 0),
            text=body,
            parse_mode="HTML",
            reply_markup=markup,
            disable_web_page_preview=True,
        )
        await DeliveredBatch.filter(id=row.id).update(
            address=str(message.chat_id), external_id=str(message.message_id), updated_at=utcnow()
        )

    async def _draw(self, row: DeliveredBatch) -> None:
        row.updated_at = utcnow()
        await row.save(update_fields=["state", "updated_at"])
        if not row.external_id:
            return
        body, markup = await self._render(row)
        await edit_message(self.bot, row.address, row.external_id, body, markup)

    async def _cards(self, row: DeliveredBatch) -> list[Card]:
        return await listed_cards(row)

    async def _render(self, row: DeliveredBatch) -> tuple[str, InlineKeyboardMarkup | None]:
        cards = await self._cards(row)
        task = await Task.filter(id=row.task_id).first()
        title = _(
            "%(count)s approvals wait in “%(task)s”",
            count=len(cards),
            task=task.title if task else "",
        )
        lines = [f"<b>{_e(title)}</b>", ""]
        for number, card in enumerate(cards, 1):
            line = f"{number}. {card.title}"
            if card.action is not None:
                line += " · " + _("Fingerprint %(short)s", short=card.action.fingerprint)
            if card.is_pending:
                risk = risk_text(card)
                lines.append(_e(f"{line} — {risk}" if risk else line))
            else:
                lines.append(_e(f"{line}: {outcome_text(card) or ''}"))
        if row.state.get("replaced"):
            lines += ["", _e(_("Replaced by a newer message below."))]
            return "\n".join(lines), None
        pending = [card for card in cards if card.is_pending]
        if not pending:
            return "\n".join(lines), None
        if any(card.is_high_risk for card in pending):
            lines += ["", _e(_("Some are high risk: approving all asks you to confirm."))]
        return "\n".join(lines), _keyboard(row, len(pending))

    # --- presses --------------------------------------------------------------------------

    async def on_press(self, query: Any, data: str) -> tuple[str, bool]:
        """A press on a batch message → the text to answer it with, and whether as an alert."""
        batch_id, action = parse_batch(data)
        row = await DeliveredBatch.filter(id=batch_id, surface=SURFACE).first()
        if row is None:
            return _("This card is no longer here."), True
        note_pressed_message(row, query)
        recipient = await self.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            return await self._act_on_press(query, row, recipient, action)

    async def _act_on_press(
        self, query: Any, row: DeliveredBatch, recipient: Recipient, action: str
    ) -> tuple[str, bool]:
        account = await account_for_identity(SURFACE, str(query.from_user.id))
        if account is None or account.user_id != row.user_id:
            return _("This card is for someone else."), True
        if row.state.get("replaced"):
            return _("Replaced by a newer message below."), True
        pending = [card for card in await self._cards(row) if card.is_pending]
        if not pending:
            await self._draw(row)
            return _("All of these are decided."), True
        if action == BatchAction.APPROVE_ALL:
            if any(card.is_high_risk for card in pending):
                row.state = {"confirm": APPROVE}
                await self._draw(row)
                return _("Tap again to confirm."), False
            return await self._decide(row, recipient, pending, APPROVE)
        if action == BatchAction.CONFIRM:
            if row.state.get("confirm") != APPROVE:
                return _("Tap again to confirm."), True
            return await self._decide(row, recipient, pending, APPROVE)
        if action == BatchAction.REJECT_ALL:  # a "no" never needs a second tap
            return await self._decide(row, recipient, pending, REJECT)
        if action == BatchAction.CANCEL:
            row.state = {}
            await self._draw(row)
            return _("Not answered."), False
        return _("This card is no longer here."), True

    async def _decide(
        self, row: DeliveredBatch, recipient: Recipient, pending: list[Card], option_id: str
    ) -> tuple[str, bool]:
        items = await batch_items(row, pending, option_id)
        try:
            result = await self.context.respond_to_batch(
                row.workspace_id, row.task_id, items, recipient, via=SURFACE
            )
        except HubError as error:
            return error.message, True
        finally:
            row.state = {}
            await self._draw(row)
        return recorded(result), False


def _keyboard(row: DeliveredBatch, count: int) -> InlineKeyboardMarkup:
    def button(label: str, action: BatchAction) -> list[InlineKeyboardButton]:
        return [InlineKeyboardButton(label, callback_data=batch_data(row.id, action))]

    if row.state.get("confirm") == APPROVE:
        return InlineKeyboardMarkup(
            [
                button(_("⛔ Yes, approve all (%(count)s)", count=count), BatchAction.CONFIRM),
                button(_("↩️ Cancel"), BatchAction.CANCEL),
            ]
        )
    return InlineKeyboardMarkup(
        [
            button(_("✅ Approve all (%(count)s)", count=count), BatchAction.APPROVE_ALL),
            button(_("✖️ Reject all (%(count)s)", count=count), BatchAction.REJECT_ALL),
        ]
    )


def _e(value: str) -> str:
    return html.escape(value, quote=False)
