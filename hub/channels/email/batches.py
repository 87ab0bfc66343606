"""One mail that answers a task's pending approvals together: all at once, or item by item.

Once two or more approvals of one task have been mailed to a person, a batch mail lists them
with three signed links (``LinkSigner.batch_url``): "Approve all (N)", "Reject all (N)" and
"Answer item by item". Each leads to a page (``hub.channels.batch_pages``) that shows the
cards and a form; its POST decides exactly the cards that mail listed, through
``respond_to_batch`` (so each is checked and recorded as if answered alone, ``via email``).
A newer approval of the task brings a new batch mail listing it too; a sent mail cannot
change, so the older one's links still answer exactly what it listed, and its pages show
each card's outcome once decided, here or anywhere else.

What a mail showed is remembered per card (``DeliveredCard`` rows of the ``email`` surface,
with the hash of the action it showed), so a batch answer is bound to the action each
card's own mail showed, as a single card's link is.
"""

from __future__ import annotations

import secrets
from email.message import EmailMessage
from typing import Any

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card
from hub.channels.delivered_batches import listed_cards
from hub.channels.email.render import batch_message
from hub.channels.links import BATCH_ACTIONS
from hub.core.store.models import Task
from hub.core.store.notification_models import DeliveredBatch, DeliveredCard
from hub.core.work.batch_answers import batchable_cards
from hub.core.work.interactions import list_interactions
from hub.protocol.clock import utcnow

SURFACE = "email"


async def remember_mail(recipient: Recipient, card: Card, message_id: str) -> None:
    """Note that ``card`` was mailed to ``recipient`` (and the action the mail showed)."""
    state: dict[str, Any] = {"actionHash": card.action_hash} if card.action else {}
    now = utcnow()
    row = await DeliveredCard.filter(
        surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
    ).first()
    if row is None:
        await DeliveredCard.create(
            id=secrets.token_urlsafe(6),
            surface=SURFACE,
            user_id=recipient.user_id,
            workspace_id=card.workspace_id,
            interaction_id=card.id,
            address=recipient.email,
            external_id=message_id,
            state=state,
            created_at=now,
            updated_at=now,
        )


async def batch_to_offer(recipient: Recipient, card: Card) -> DeliveredBatch | None:
    """The batch mail to send after ``card`` was mailed, if two or more approvals of its
    task wait in the person's mail and no batch mail lists exactly those yet."""
    if card.task_id is None or not card.is_pending:
        return None
    waiting = batchable_cards(
        await list_interactions(card.workspace_id, task_id=card.task_id, pending_only=True)
    )
    mailed = set(
        await DeliveredCard.filter(
            surface=SURFACE,
            user_id=recipient.user_id,
            interaction_id__in=[i.id for i in waiting],
        ).values_list("interaction_id", flat=True)
    )
    listed = [i.id for i in waiting if i.id in mailed]
    if len(listed) < 2:
        return None
    newest = (
        await DeliveredBatch.filter(
            surface=SURFACE, user_id=recipient.user_id, task_id=card.task_id
        )
        .order_by("-created_at")
        .first()
    )
    if newest is not None and newest.interaction_ids == listed:
        # Listed already: send it only if its mail never went (a retry after a failure).
        return None if newest.external_id else newest
    now = utcnow()
    return await DeliveredBatch.create(
        id=secrets.token_urlsafe(6),
        surface=SURFACE,
        user_id=recipient.user_id,
        workspace_id=card.workspace_id,
        task_id=card.task_id,
        interaction_ids=listed,
        address=recipient.email,
        state={},
        created_at=now,
        updated_at=now,
    )


async def batch_mail(
    row: DeliveredBatch, recipient: Recipient, context: ChannelContext, sender: str
) -> EmailMessage:
    """The batch mail for ``row``: its cards and the three links."""
    cards = await listed_cards(row)
    task = await Task.filter(id=row.task_id).first()
    links = {
        action: context.batch_link(row.id, recipient, action=action) for action in BATCH_ACTIONS
    }
    return batch_message(
        cards, task.title if task else "", recipient, sender, links=links, key=f"batch.{row.id}"
    )


async def mark_sent(row: DeliveredBatch, message: EmailMessage) -> None:
    await DeliveredBatch.filter(id=row.id).update(
        external_id=str(message["Message-ID"]), updated_at=utcnow()
    )


__all__ = [
    "batch_mail",
    "batch_to_offer",
    "mark_sent",
    "remember_mail",
]
