"""The event log: appending events in sequence (group commit, bulk inserts), the handlers an
append runs, the bus that publishes them after commit, feeds, the relay between processes.
"""

from __future__ import annotations

from hub.core.log.bus import (
    DEFAULT_BUS,
    BusClosing,
    EventBus,
    PublishedEvent,
    SubscriberDropped,
    Subscription,
)
from hub.core.log.envelopes import to_envelope, to_published
from hub.core.log.epochs import AHEAD_OF_LOG, EPOCH_CHANGED, Resumption, resume
from hub.core.log.events import (
    LOG_WRITES,
    MAX_SEQUENCE,
    AppendResult,
    append_event,
    events_after,
    last_sequence,
    queue_append,
    rebuild_projections,
    start_new_epochs,
    use_projection,
)
from hub.core.log.feed import WorkspaceFeed
from hub.core.log.fresh_rows import fresh
from hub.core.log.group_commit import GroupCommit, Request
from hub.core.log.handlers import Connection, EventHandlers
from hub.core.log.idempotency import MAX_KEY_LENGTH, envelope_id_for
from hub.core.log.relay import PostgresRelay
from hub.core.log.watch import LOG_WATCH_PERIOD_S, LogWatch

__all__ = [
    "AHEAD_OF_LOG",
    "DEFAULT_BUS",
    "EPOCH_CHANGED",
    "LOG_WATCH_PERIOD_S",
    "LOG_WRITES",
    "MAX_KEY_LENGTH",
    "MAX_SEQUENCE",
    "AppendResult",
    "BusClosing",
    "Connection",
    "EventBus",
    "EventHandlers",
    "GroupCommit",
    "LogWatch",
    "PostgresRelay",
    "PublishedEvent",
    "Request",
    "Resumption",
    "SubscriberDropped",
    "Subscription",
    "WorkspaceFeed",
    "append_event",
    "envelope_id_for",
    "events_after",
    "fresh",
    "last_sequence",
    "queue_append",
    "rebuild_projections",
    "resume",
    "start_new_epochs",
    "to_envelope",
    "to_published",
    "use_projection",
]
