"""Liveness (``/healthz``) and Prometheus metrics (``/metrics``)."""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)
from quart import Blueprint, Quart, Response
from tortoise import connections

from hub.core.errors import Unavailable
from hub.core.log.bus import DEFAULT_BUS, PublishedEvent

blueprint = Blueprint("health", __name__)

REGISTRY = CollectorRegistry()
EVENTS_PUBLISHED = Counter(
    "lineup_events_published",
    "Events committed to the log and published.",
    ["type"],
    registry=REGISTRY,
)
LIVE_SUBSCRIBERS = Gauge(
    "lineup_live_subscribers",
    "Live event subscribers (agent and client sockets).",
    registry=REGISTRY,
)
LIVE_SUBSCRIBERS.set_function(lambda: DEFAULT_BUS.subscriber_count())


def _count(event: PublishedEvent) -> None:
    EVENTS_PUBLISHED.labels(type=event.type).inc()


DEFAULT_BUS.add_listener(_count)


@blueprint.get("/healthz")
async def healthz() -> dict[str, str]:
    try:
        await connections.get("default").execute_query("SELECT 1")
    except Exception as error:
        raise Unavailable(f"The database does not answer: {error.__class__.__name__}.") from None
    return {"status": "ok"}


@blueprint.get("/metrics")
async def metrics() -> Response:
    return Response(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)
