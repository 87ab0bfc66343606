"""Telling people what waits for them: notifications written with their cause, the outbox
that delivers them, preferences per surface, and the outside accounts people link.
"""

from __future__ import annotations

from hub.core.notify.channel_accounts import (
    account_for_identity,
    create_link_token,
    linked_accounts,
    redeem_link_token,
)
from hub.core.notify.notifications import may_enqueue
from hub.core.notify.outbox import (
    DeliveryRefused,
    OutboxWorker,
    Outcome,
    RetryLater,
    RetryPolicy,
)
from hub.core.notify.preferences import (
    EVENTS,
    Surface,
    declare_surface,
    declare_surface_not_set_up,
    due_at,
    get_preferences,
    quiet_until,
    settings_for,
    surfaces,
    surfaces_not_set_up,
    update_preferences,
    wants,
    withdraw_surface,
)

__all__ = [
    "EVENTS",
    "DeliveryRefused",
    "OutboxWorker",
    "Outcome",
    "RetryLater",
    "RetryPolicy",
    "Surface",
    "account_for_identity",
    "create_link_token",
    "declare_surface",
    "declare_surface_not_set_up",
    "due_at",
    "get_preferences",
    "linked_accounts",
    "may_enqueue",
    "quiet_until",
    "redeem_link_token",
    "settings_for",
    "surfaces",
    "surfaces_not_set_up",
    "update_preferences",
    "wants",
    "withdraw_surface",
]
