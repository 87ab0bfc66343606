"""Human surfaces: the Channel contract, the Card view-model, the registry.

Write a channel by subclassing ``Channel`` and registering it under the ``lineup.channels``
entry-point group (see docs/channels.md). The hub's own channels use the same path.
"""

from hub.channels.base import (
    Capabilities,
    Channel,
    ChannelContext,
    DeliveryRefused,
    Recipient,
    RetryLater,
)
from hub.channels.cards import Card, CardOption, Notice
from hub.channels.registry import GROUP, MissingExtra, available_channels, discover

__all__ = [
    "GROUP",
    "Capabilities",
    "Card",
    "CardOption",
    "Channel",
    "ChannelContext",
    "DeliveryRefused",
    "MissingExtra",
    "Notice",
    "Recipient",
    "RetryLater",
    "available_channels",
    "discover",
]
