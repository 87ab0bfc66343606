"""What a batch message listed (``DeliveredBatch``), read back the same way by every surface
that sends one: the cards as they are now, and the action each card's own message showed."""

from __future__ import annotations

from hub.channels.cards import Card, load_card
from hub.core.store.notification_models import DeliveredBatch, DeliveredCard


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


__all__ = ["listed_cards", "shown_action_hashes"]
