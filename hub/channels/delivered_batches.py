"""What a batch message listed (``DeliveredBatch``), read back the same way by every surface
that sends one: the batch a person's chat shows now, the cards as they are now, the action
each card's own message showed, the answers a press gives, and what the press recorded."""

from __future__ import annotations

from typing import Any

from hub.channels.cards import Card, load_card
from hub.core.store.models import Interaction
from hub.core.store.notification_models import DeliveredBatch, DeliveredCard
from hub.core.work.batch_answers import BatchItem, Outcome, answer_for
from hub.i18n import gettext as _
from hub.protocol.interactions import InteractionCard


async def current_batch(surface: str, user_id: str, task_id: str) -> DeliveredBatch | None:
    """The batch of ``task_id`` sent to ``user_id`` on ``surface`` that no newer one
    replaced, if any."""
    rows = await DeliveredBatch.filter(surface=surface, user_id=user_id, task_id=task_id).order_by(
        "-created_at"
    )
    return next((row for row in rows if not row.state.get("replaced")), None)


async def listed_cards(row: DeliveredBatch) -> list[Card]:
    """The cards ``row`` listed, in its order, as they stand now."""
    cards = [await load_card(row.workspace_id, i) for i in row.interaction_ids]
    return [card for card in cards if card is not None]


async def shown_action_hashes(row: DeliveredBatch) -> dict[str, str]:
    """The hash of the action each listed card's own message on the same surface showed: a
    batch lists only cards that reached the person there, so that is what they saw."""
    delivered = await DeliveredCard.filter(
        surface=row.surface, user_id=row.user_id, interaction_id__in=row.interaction_ids
    )
    return {d.interaction_id: d.state["actionHash"] for d in delivered if "actionHash" in d.state}


async def batch_items(row: DeliveredBatch, pending: list[Card], option_id: str) -> list[BatchItem]:
    """``option_id`` on each pending card, in the order the batch listed them, bound to the
    action each card's own message showed."""
    interactions = await Interaction.filter(id__in=[card.id for card in pending])
    shown = await shown_action_hashes(row)
    return [
        BatchItem(
            i.id,
            answer_for(InteractionCard.model_validate(i.payload), option_id, shown.get(i.id)),
        )
        for i in sorted(interactions, key=lambda i: row.interaction_ids.index(i.id))
    ]


def recorded(result: dict[str, Any]) -> str:
    """What the batch did, counting the cards someone else decided first apart."""
    outcomes = [item["outcome"] for item in result["items"]]
    answer = _("Recorded %(count)s answers.", count=outcomes.count(Outcome.DECIDED))
    others = len(outcomes) - outcomes.count(Outcome.DECIDED)
    if others:
        answer += " " + _("%(count)s were decided elsewhere first.", count=others)
    return answer


__all__ = ["batch_items", "current_batch", "listed_cards", "recorded", "shown_action_hashes"]
