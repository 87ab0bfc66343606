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
OUTBOX_NOTIFICATIONS = Gauge(
    "lineup_outbox_notifications",
    "Notifications in the outbox by channel and status: `pending` is the backlog, "
    "`failed` the ones that failed for good, `sent` and `skipped` the ones done.",
    ["channel", "status"],
    registry=REGISTRY,
)
OUTBOX_RETRYING = Gauge(
    "lineup_outbox_retrying",
    "Pending notifications whose delivery failed at least once and will be tried again.",
    ["channel"],
    registry=REGISTRY,
)
OUTBOX_OLDEST_AGE = Gauge(
    "lineup_outbox_oldest_pending_age_seconds",
    "Age of the oldest notification still waiting, by channel.",
    ["channel"],
    registry=REGISTRY,
)
POOL_SIZE = Gauge(
    "lineup_database_pool_size",
    "Database connections this process holds open (SQLite: its writer's and its reader's).",
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


DATABASE_READ = Gauge(
    "lineup_metrics_database_read",
    "1 when the last scrape could read the database's series, 0 when it could not (their "
    "values are then the last ones read).",
    registry=REGISTRY,
)


async def refresh() -> None:
    """Read what the database and the pool hold into the gauges, just before a scrape.

    A database that does not answer must not cost the scrape: the process's own series
    are the ones that tell an operator what is wrong then."""
    try:
        await _read_database()
    except Exception as error:
        logger.warning("metrics: the database did not answer: %s", error.__class__.__name__)
        DATABASE_READ.set(0)
    else:
        DATABASE_READ.set(1)


async def _read_database() -> None:
    _read_pool()
    CARDS_PENDING.set(await Interaction.filter(status=InteractionStatus.PENDING).count())
    rows: list[dict[str, Any]] = (
        await Notification.all()
        .annotate(count=Count("id"), oldest=Min("created_at"))
        .group_by("surface", "status")
        .values("surface", "status", "count", "oldest")
    )
    retrying: list[dict[str, Any]] = (
        await Notification.filter(status=NotificationStatus.PENDING, attempts__gt=0)
        .annotate(count=Count("id"))
        .group_by("surface")
        .values("surface", "count")
    )
    now = utcnow()
    # A channel whose backlog emptied reads 0 rather than keeping its last value.
    for gauge in (OUTBOX_NOTIFICATIONS, OUTBOX_RETRYING, OUTBOX_OLDEST_AGE):
        gauge.clear()
    for row in rows:
        channel, status = row["surface"], str(row["status"])
        OUTBOX_NOTIFICATIONS.labels(channel, status).set(int(row["count"]))
        if status == NotificationStatus.PENDING:
            OUTBOX_OLDEST_AGE.labels(channel).set(_age(now, row["oldest"]))
    for row in retrying:
        OUTBOX_RETRYING.labels(row["surface"]).set(int(row["count"]))


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
    else:  # SQLite: the writer's connection and the reader's (hub.core.store.sqlite_reader)
        open_ = [connections.get(name) for name in connections.db_config]
        POOL_SIZE.set(sum(getattr(c, "_connection", None) is not None for c in open_))
