"""One Slack message that answers a task's pending approvals together.

Once two or more approvals of one task have reached a person's conversation with the bot,
a batch message lists them with "Approve all (N)" / "Reject all (N)"; each card keeps its
own message, answered item by item. A press decides exactly the cards the batch message
listed, through ``ChannelContext.respond_to_batch`` (each checked and recorded as if
answered alone); a newer card of the task brings a new batch message and retires the old
one. If any listed card is high risk, "approve all" first asks for a confirming press, as
a single high-risk card does. The message shows each card's outcome as it is decided, here
or anywhere else.
"""

from __future__ import annotations

import secrets
from typing import Any

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, load_card
from hub.channels.delivered_batches import batch_items, current_batch
from hub.channels.slack.actions import BatchAction, Refused, batch_action_id, parse_batch
from hub.channels.slack.blocks import Block, escape, plain
from hub.channels.slack.web_api import SlackApi
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

SURFACE = "slack"


class BatchMessages:
    def __init__(self, api: SlackApi, context: ChannelContext) -> None:
        self.api = api
        self.context = context

    # --- offering and redrawing -----------------------------------------------------------

    async def offer(self, recipient: Recipient, card: Card) -> None:
        """After ``card`` reached the conversation: offer its task's approvals together, if
        several wait there. Safe to repeat (a retried delivery offers nothing new)."""
        if card.task_id is None or not card.is_pending:
            return
        with speaking(recipient.language):
            await self._offer(recipient, card.workspace_id, card.task_id)

    async def _offer(self, recipient: Recipient, workspace_id: str, task_id: str) -> None:
        waiting = batchable_cards(
            await list_interactions(workspace_id, task_id=task_id, pending_only=True)
        )
        shown = {
            str(interaction_id)
            for interaction_id in await DeliveredCard.filter(
                surface=SURFACE,
                user_id=recipient.user_id,
                interaction_id__in=[i.id for i in waiting],
            )
            .exclude(external_id="")
            .values_list("interaction_id", flat=True)
        }
        listed = [i.id for i in waiting if i.id in shown]
        if len(listed) < 2:
            return
        current = await current_batch(SURFACE, recipient.user_id, task_id)
        if current is not None and current.interaction_ids == listed:
            if not current.external_id:  # created, but the post did not go through
                await self._post(current, recipient)
            return
        if current is not None:
            current.state = {"replaced": True}
            await self._draw(current)
        now = utcnow()
        row = await DeliveredBatch.create(
            id=secrets.token_urlsafe(6),
            surface=SURFACE,
            user_id=recipient.user_id,
            workspace_id=workspace_id,
            task_id=task_id,
            interaction_ids=listed,
            state={},
            created_at=now,
            updated_at=now,
        )
        await self._post(row, recipient)

    async def refresh(self, user_id: str, card: Card) -> None:
        """``card`` was decided (anywhere): redraw the batch messages that list it."""
        if card.task_id is None:
            return
        rows = await DeliveredBatch.filter(
            surface=SURFACE, user_id=user_id, task_id=card.task_id
        ).exclude(external_id="")
        for row in rows:
            if card.id in row.interaction_ids and not row.state.get("replaced"):
                recipient = await self.context.recipient(user_id, SURFACE)
                with speaking(recipient.language):
                    await self._draw(row)

    async def _post(self, row: DeliveredBatch, recipient: Recipient) -> None:
        text, blocks = await self._render(row)
        posted = await self.api.post_message(
            channel=recipient.address or "", text=text, blocks=blocks
        )
        await DeliveredBatch.filter(id=row.id).update(
            address=str(posted.get("channel") or recipient.address),
            external_id=str(posted.get("ts") or ""),
            updated_at=utcnow(),
        )

    async def _draw(self, row: DeliveredBatch) -> None:
        row.updated_at = utcnow()
        await row.save(update_fields=["state", "updated_at"])
        if not row.external_id:
            return
        text, blocks = await self._render(row)
        await self.api.update_message(row.address, row.external_id, text, blocks)

    async def _cards(self, row: DeliveredBatch) -> list[Card]:
        cards = [await load_card(row.workspace_id, i) for i in row.interaction_ids]
        return [card for card in cards if card is not None]

    async def _render(self, row: DeliveredBatch) -> tuple[str, list[Block]]:
        cards = await self._cards(row)
        task = await Task.filter(id=row.task_id).first()
        title = _(
            "%(count)s approvals wait in “%(task)s”",
            count=len(cards),
            task=task.title if task else "",
        )
        lines = []
        for number, card in enumerate(cards, 1):
            line = f"{number}. {card.title}"
            if card.action is not None:
                line += " · " + _("Fingerprint %(short)s", short=card.action.fingerprint)
            if card.is_pending:
                risk = risk_text(card)
                lines.append(f"{line} — {risk}" if risk else line)
            else:
                lines.append(f"{line}: {outcome_text(card) or ''}")
        blocks: list[Block] = [
            {"type": "section", "text": plain(title[:3000])},
            {"type": "section", "text": plain("\n".join(lines)[:3000])},
        ]
        pending = [card for card in cards if card.is_pending]
        if row.state.get("replaced"):
            blocks.append(_note(_("Replaced by a newer message below.")))
        elif pending:
            if any(card.is_high_risk for card in pending):
                blocks.append(_note(_("Some are high risk: approving all asks you to confirm.")))
            else:
                blocks.append(_note(_("Or answer each card in its own message above.")))
            blocks.append(_buttons(row, len(pending)))
        return escape(title[:3000]), blocks

    # --- presses --------------------------------------------------------------------------

    async def on_press(self, payload: dict[str, Any], action_id: str, presser: str) -> None:
        batch_id, action = parse_batch(action_id)
        row = await DeliveredBatch.filter(id=batch_id, surface=SURFACE).first()
        if row is None:
            raise Refused(_("This card is no longer here."))
        container = payload.get("container") or {}
        if not row.external_id and container.get("message_ts"):
            row.address = str(container.get("channel_id") or "")
            row.external_id = str(container["message_ts"])
        recipient = await self.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            try:
                await self._act(row, recipient, action, presser)
            except Refused as refused:
                raise Refused(str(refused)) from None

    async def _act(
        self, row: DeliveredBatch, recipient: Recipient, action: str, presser: str
    ) -> None:
        account = await account_for_identity(SURFACE, presser) if presser else None
        if account is None or account.user_id != row.user_id:
            raise Refused(_("This card is for someone else."))
        if row.state.get("replaced"):
            raise Refused(_("Replaced by a newer message below."))
        pending = [card for card in await self._cards(row) if card.is_pending]
        if not pending:
            await self._draw(row)
            raise Refused(_("All of these are decided."))
        if action == BatchAction.APPROVE_ALL:
            if any(card.is_high_risk for card in pending):
                row.state = {"confirm": APPROVE}
                await self._draw(row)
                return
            await self._decide(row, recipient, pending, APPROVE)
        elif action == BatchAction.CONFIRM:
            if row.state.get("confirm") != APPROVE:
                raise Refused(_("Tap again to confirm."))
            await self._decide(row, recipient, pending, APPROVE)
        elif action == BatchAction.REJECT_ALL:  # a "no" never needs a second press
            await self._decide(row, recipient, pending, REJECT)
        elif action == BatchAction.CANCEL:
            row.state = {}
            await self._draw(row)
        else:
            raise Refused(_("This card is no longer here."))

    async def _decide(
        self, row: DeliveredBatch, recipient: Recipient, pending: list[Card], option_id: str
    ) -> None:
        items = await batch_items(row, pending, option_id)
        try:
            await self.context.respond_to_batch(
                row.workspace_id, row.task_id, items, recipient, via=SURFACE
            )
        except HubError as error:
            raise Refused(error.message) from None
        finally:
            row.state = {}
            await self._draw(row)


def _note(text: str) -> Block:
    return {"type": "context", "elements": [plain(text)]}


def _buttons(row: DeliveredBatch, count: int) -> Block:
    def button(label: str, action: BatchAction, style: str | None = None) -> Block:
        element: Block = {
            "type": "button",
            "text": plain(label),
            "action_id": batch_action_id(row.id, action),
        }
        if style:
            element["style"] = style
        return element

    if row.state.get("confirm") == APPROVE:
        elements = [
            button(
                _("⛔ Yes, approve all (%(count)s)", count=count), BatchAction.CONFIRM, "danger"
            ),
            button(_("Cancel"), BatchAction.CANCEL),
        ]
    else:
        elements = [
            button(_("Approve all (%(count)s)", count=count), BatchAction.APPROVE_ALL, "primary"),
            button(_("Reject all (%(count)s)", count=count), BatchAction.REJECT_ALL),
        ]
    return {"type": "actions", "elements": elements}
