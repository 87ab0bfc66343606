"""One Feishu card that answers a task's pending approvals together.

As in Telegram (``hub.channels.telegram.batches``): once two or more approvals of one task
have reached a person's chat, a batch card lists them with "Approve all (N)" / "Reject all
(N)"; item by item, each card's own message still answers it alone. A press decides exactly
the cards the batch card listed, through ``ChannelContext.respond_to_batch`` (each checked
and recorded as if answered alone); a newer card of the task brings a new batch card and
retires the old one. If any listed card is high risk, "approve all" first asks for a
confirming press. The batch card shows each card's outcome as it is decided, here or
anywhere else.
"""

from __future__ import annotations

import secrets
from typing import Any

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, load_card
from hub.channels.delivered_batches import batch_items, current_batch, recorded
from hub.channels.feishu.api import FeishuApi
from hub.channels.feishu.inbound import Callback, Reply
from hub.channels.feishu.presses import BatchAction, Press, batch_value
from hub.channels.feishu.render import card_json, line, plain
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

SURFACE = "feishu"


class BatchCards:
    def __init__(self, api: FeishuApi, context: ChannelContext) -> None:
        self.api = api
        self.context = context

    # --- offering and redrawing -----------------------------------------------------------

    async def offer(self, recipient: Recipient, card: Card) -> None:
        """After ``card`` reached the chat: offer its task's approvals together, if several
        wait there. Safe to repeat (a retried delivery offers nothing new)."""
        if card.task_id is None or not card.is_pending:
            return
        with speaking(recipient.language):
            await self._offer(recipient, card, card.task_id)

    async def _offer(self, recipient: Recipient, card: Card, task_id: str) -> None:
        waiting = batchable_cards(
            await list_interactions(card.workspace_id, task_id=task_id, pending_only=True)
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
        current = await current_batch(SURFACE, recipient.user_id, task_id)
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
            task_id=task_id,
            interaction_ids=listed,
            state={},
            created_at=now,
            updated_at=now,
        )
        await self._send(row, recipient)

    async def refresh(self, recipient: Recipient, card: Card) -> None:
        """``card`` was decided (anywhere): redraw the batch cards that list it."""
        if card.task_id is None:
            return
        for row in await DeliveredBatch.filter(
            surface=SURFACE, user_id=recipient.user_id, task_id=card.task_id
        ).exclude(external_id=""):
            if card.id in row.interaction_ids and not row.state.get("replaced"):
                with speaking(recipient.language):
                    await self._draw(row)

    async def _send(self, row: DeliveredBatch, recipient: Recipient) -> None:
        sent = await self.api.send_card(
            recipient.address or "", await self.render(row), uuid=f"batch-{row.id}"
        )
        await DeliveredBatch.filter(id=row.id).update(
            address=sent.chat_id, external_id=sent.message_id, updated_at=utcnow()
        )

    async def _draw(self, row: DeliveredBatch) -> None:
        await _save_state(row)
        if row.external_id:
            await self.api.patch_card(row.external_id, await self.render(row))

    async def render(self, row: DeliveredBatch) -> dict[str, Any]:
        cards = [await load_card(row.workspace_id, i) for i in row.interaction_ids]
        listed = [card for card in cards if card is not None]
        task = await Task.filter(id=row.task_id).first()
        title = _(
            "%(count)s approvals wait in “%(task)s”",
            count=len(listed),
            task=task.title if task else "",
        )
        elements: list[dict[str, Any]] = []
        for number, card in enumerate(listed, 1):
            text = f"{number}. {card.title}"
            if card.action is not None:
                text += " · " + _("Fingerprint %(short)s", short=card.action.fingerprint)
            if card.is_pending:
                risk = risk_text(card)
                elements.append(line(f"{text} — {risk}" if risk else text))
            else:
                elements.append(line(f"{text}: {outcome_text(card) or ''}"))
        pending = [card for card in listed if card.is_pending]
        if row.state.get("replaced"):
            elements.append(line(_("Replaced by a newer message below.")))
        elif pending:
            if any(card.is_high_risk for card in pending):
                elements.append(line(_("Some are high risk: approving all asks you to confirm.")))
            elements += _buttons(row, len(pending))
        header = {"title": plain(title), "template": "blue" if pending else "grey"}
        return card_json(header, elements, title)

    # --- presses --------------------------------------------------------------------------

    async def on_press(self, callback: Callback, press: Press) -> Reply:
        row = await DeliveredBatch.filter(id=press.batch_id, surface=SURFACE).first()
        if row is None:
            return Reply(_("This card is no longer here."), "error")
        if not row.external_id and callback.message_id:
            row.address, row.external_id = callback.chat_id, callback.message_id
        recipient = await self.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            account = await account_for_identity(SURFACE, callback.open_id)
            if account is None or account.user_id != row.user_id:
                return Reply(_("This card is for someone else."), "error")
            return await self._act(row, recipient, press.action)

    async def _act(self, row: DeliveredBatch, recipient: Recipient, action: str) -> Reply:
        if row.state.get("replaced"):
            return Reply(_("Replaced by a newer message below."), "warning")
        cards = [await load_card(row.workspace_id, i) for i in row.interaction_ids]
        pending = [card for card in cards if card is not None and card.is_pending]
        if not pending:
            return Reply(_("All of these are decided."), "warning", await self._redrawn(row))
        if action == BatchAction.APPROVE_ALL:
            if any(card.is_high_risk for card in pending):
                row.state = {"confirm": APPROVE}
                return Reply(_("Tap again to confirm."), "warning", await self._redrawn(row))
            return await self._decide(row, recipient, pending, APPROVE)
        if action == BatchAction.CONFIRM:
            if row.state.get("confirm") != APPROVE:
                return Reply(_("Tap again to confirm."), "warning")
            return await self._decide(row, recipient, pending, APPROVE)
        if action == BatchAction.REJECT_ALL:  # a "no" never needs a second press
            return await self._decide(row, recipient, pending, REJECT)
        if action == BatchAction.CANCEL:
            row.state = {}
            return Reply(_("Not answered."), "info", await self._redrawn(row))
        return Reply(_("This card is no longer here."), "error")

    async def _decide(
        self, row: DeliveredBatch, recipient: Recipient, pending: list[Card], option_id: str
    ) -> Reply:
        items = await batch_items(row, pending, option_id)
        try:
            result = await self.context.respond_to_batch(
                row.workspace_id, row.task_id, items, recipient, via=SURFACE
            )
        except HubError as error:
            row.state = {}
            return Reply(error.message, "error", await self._redrawn(row))
        row.state = {}
        return Reply(recorded(result), "success", await self._redrawn(row))

    async def _redrawn(self, row: DeliveredBatch) -> dict[str, Any]:
        await _save_state(row)
        return await self.render(row)


def _buttons(row: DeliveredBatch, count: int) -> list[dict[str, Any]]:
    def button(label: str, action: BatchAction, kind: str) -> dict[str, Any]:
        return {
            "tag": "button",
            "text": plain(label),
            "type": kind,
            "behaviors": [{"type": "callback", "value": batch_value(row.id, action)}],
        }

    if row.state.get("confirm") == APPROVE:
        return [
            button(
                _("⛔ Yes, approve all (%(count)s)", count=count), BatchAction.CONFIRM, "danger"
            ),
            button(_("↩️ Cancel"), BatchAction.CANCEL, "default"),
        ]
    return [
        button(_("✅ Approve all (%(count)s)", count=count), BatchAction.APPROVE_ALL, "primary"),
        button(_("✖️ Reject all (%(count)s)", count=count), BatchAction.REJECT_ALL, "default"),
    ]


async def _save_state(row: DeliveredBatch) -> None:
    row.updated_at = utcnow()
    await row.save(update_fields=["state", "updated_at"])
