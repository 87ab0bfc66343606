"""The notebook surface as the hub sees it: a channel whose people come to it.

A Jupyter notebook has no address the hub could send to. The person's notebook opens the
inbox (``hub.notebook``, a client of the JSON API and ``/ws/client`` that needs none of
the server's packages), reads the pending cards from the log and follows it live; a card
answered there goes through the API's respond endpoint, which records ``via: notebook``
and hands it to ``respond_to_interaction`` like every other surface.

So this channel renders nothing and sends nothing: delivering a card, updating it and
notices are the log itself, which the notebook reads. It is registered like every channel
(``lineup.channels``) so the hub knows the surface — its name in preferences and in the
"who decided, via what" sentences — and by default it asks for no notification rows.
"""

from __future__ import annotations

from typing import ClassVar

from hub.channels.base import Capabilities, Channel, Recipient
from hub.channels.cards import Card, Notice


class NotebookChannel(Channel):
    name = "notebook"
    # The notebook inbox renders every card type natively, long review content included.
    capabilities = Capabilities()
    default_events: ClassVar[frozenset[str]] = frozenset()

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        """Nothing to send: an open inbox shows the card from the log as it is asked."""

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        """Nothing to send: an open inbox turns the card read-only from the log."""

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        """Nothing to send: an open inbox reads task events from the log."""


__all__ = ["NotebookChannel"]
