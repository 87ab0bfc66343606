"""The hub's Prometheus metrics: one registry, what a dashboard of the hub needs.

Three kinds of series, by where their truth lives:

* counted as things happen in this process: HTTP requests (``hub.host.access``), events
  appended, the time people take to decide a card;
* read from this process when scraped: sockets of agents and browsers, the database pool;
* read from the database when scraped, because several hub processes share it and each
  would count only its own part: the outbox's backlog and failures, the cards waiting.

Routes are labelled by their URL rule (``/api/v1/workspaces/<workspace_id>/tasks``), never
by the raw path, so ids cannot multiply the series; events by their family (``task`` of
``task.created``).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)
from tortoise import connections
from tortoise.functions import Count, Min

from hub.core.log.bus import DEFAULT_BUS, PublishedEvent
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import Notification, NotificationStatus
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()
# The standard process (CPU, memory, file descriptors), platform and GC series, in the
# hub's registry rather than the library's global one, which a test may import twice.
for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(collector)

HTTP_REQUESTS = Counter(
    "lineup_http_requests",
    "HTTP requests answered, by method, route (its URL rule) and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_DURATION = Histogram(
    "lineup_http_request_duration_seconds",
    "Time from a request's arrival to its response, by method and route.",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)
EVENTS_APPENDED = Counter(
    "lineup_events_appended",
    "Events this process appended to the log, by family (`task` of `task.created`).",
    ["family"],
    registry=REGISTRY,
)
DECISION_SECONDS = Histogram(
    "lineup_card_decision_seconds",
    "Time from a card being asked to a person deciding it.",
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600),
    registry=REGISTRY,
)
AGENTS_CONNECTED = Gauge(
    "lineup_agents_connected",
    "Agent sockets open on this process.",
    registry=REGISTRY,
)
AGENTS_CONNECTED.set_function(DEFAULT_BUS.addressed_subscriber_count)
CLIENTS_CONNECTED = Gauge(
    "lineup_clients_connected",
    "Browser and client sockets following a workspace on this process.",
    registry=REGISTRY,
)
CLIENTS_CONNECTED.set_function(
    lambda: DEFAULT_BUS.subscriber_count() - DEFAULT_BUS.addressed_subscriber_count()
)
CARDS_PENDING = Gauge(
    "lineup_cards_pending", "Interaction cards waiting for a person.", registry=REGISTRY
)
OUTBOX_PENDING = Gauge(
    "lineup_outbox_pending",
    "Notifications waiting to be delivered, by channel.",
    ["channel"],
    registry=REGISTRY,
)
OUTBOX_OLDEST_AGE = Gauge(
    "lineup_outbox_oldest_pending_age_seconds",
    "Age of the oldest notification still waiting, by channel.",
    ["channel"],
    registry=REGISTRY,
)
OUTBOX_FAILED = Gauge(
    "lineup_outbox_failed",
    "Notifications that failed for good (retrying could not help), by channel.",
    ["channel"],
    registry=REGISTRY,
)
POOL_SIZE = Gauge(
    "lineup_database_pool_size",
    "Database connections this process holds open (SQLite: its one connection).",
    registry=REGISTRY,
)
POOL_IDLE = Gauge(
    "lineup_database_pool_idle",
    "Of those, the ones not in use (PostgreSQL only; asyncpg's pool reports it).",
    registry=REGISTRY,
)

# Decision lookups in flight: held so a running task is not collected before it ends.
_decisions: set[asyncio.Task[None]] = set()


def _count_event(event: PublishedEvent) -> None:
    if event.relayed:  # appended, and counted, by another process
        return
    EVENTS_APPENDED.labels(family=event.type.split(".", 1)[0]).inc()
    if event.type == "interaction.resolved":
        interaction_id = event.envelope.get("payload", {}).get("interactionId")
        if interaction_id:
            task = asyncio.get_running_loop().create_task(_observe_decision(interaction_id))
            _decisions.add(task)
            task.add_done_callback(_decisions.discard)


async def _observe_decision(interaction_id: str) -> None:
    try:
        row = await Interaction.get_or_none(id=interaction_id).only(
            "id", "created_at", "responded_at"
        )
    except Exception:  # a closing database: the histogram misses one sample, nothing else
        logger.debug("no decision time for %s", interaction_id, exc_info=True)
        return
    if row is not None and row.responded_at is not None:
        DECISION_SECONDS.observe(max(0.0, (row.responded_at - row.created_at).total_seconds()))


DEFAULT_BUS.add_listener(_count_event)


async def refresh() -> None:
    """Read what the database and the pool hold into the gauges, just before a scrape."""
    CARDS_PENDING.set(await Interaction.filter(status=InteractionStatus.PENDING).count())
    now = utcnow()
    pending = await _by_channel(NotificationStatus.PENDING, oldest=True)
    failed = await _by_channel(NotificationStatus.FAILED)
    # A channel whose backlog emptied reads 0 rather than keeping its last value.
    for gauge in (OUTBOX_PENDING, OUTBOX_OLDEST_AGE, OUTBOX_FAILED):
        gauge.clear()
    for channel, (count, oldest) in pending.items():
        OUTBOX_PENDING.labels(channel=channel).set(count)
        OUTBOX_OLDEST_AGE.labels(channel=channel).set(_age(now, oldest))
    for channel, (count, _) in failed.items():
        OUTBOX_FAILED.labels(channel=channel).set(count)
    _read_pool()


async def _by_channel(
    status: NotificationStatus, *, oldest: bool = False
) -> dict[str, tuple[int, datetime | None]]:
    query = Notification.filter(status=status).annotate(count=Count("id"))
    if oldest:
        query = query.annotate(oldest=Min("created_at"))
    rows: list[dict[str, Any]] = await query.group_by("surface").values(
        "surface", "count", *(["oldest"] if oldest else [])
    )
    return {row["surface"]: (int(row["count"]), row.get("oldest")) for row in rows}


def _age(now: datetime, then: datetime | str | None) -> float:
    if then is None:
        return 0.0
    if isinstance(then, str):  # SQLite hands an aggregate back as text
        then = datetime.fromisoformat(then)
    if then.tzinfo is None:
        then = then.replace(tzinfo=now.tzinfo)
    return max(0.0, (now - then).total_seconds())


def _read_pool() -> None:
    client = connections.get("default")
    pool = getattr(client, "_pool", None)
    if pool is not None:  # asyncpg
        POOL_SIZE.set(pool.get_size())
        POOL_IDLE.set(pool.get_idle_size())
    else:
        POOL_SIZE.set(1 if getattr(client, "_connection", None) is not None else 0)
