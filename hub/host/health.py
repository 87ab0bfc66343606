"""Liveness (``/healthz``) and Prometheus metrics (``/metrics``).

``/metrics`` is open unless ``LINEUP_METRICS_TOKEN`` is set; then a scraper sends it as a
bearer token (Prometheus: ``authorization: {credentials: …}`` in the scrape config).
"""

from __future__ import annotations

import hmac

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from quart import Blueprint, Quart, Response, current_app, request
from tortoise import connections

from hub.core.errors import Unauthorized, Unavailable
from hub.host import metrics as hub_metrics
from hub.host.settings import settings_of

blueprint = Blueprint("health", __name__)


@blueprint.get("/healthz")
async def healthz() -> dict[str, str]:
    try:
        await connections.get("default").execute_query("SELECT 1")
    except Exception as error:
        raise Unavailable(f"The database does not answer: {error.__class__.__name__}.") from None
    return {"status": "ok"}


@blueprint.get("/metrics")
async def metrics() -> Response:
    token = settings_of(current_app).metrics_token
    if token:
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(sent.encode(), token.encode()):
            raise Unauthorized("The metrics need the bearer token set in LINEUP_METRICS_TOKEN.")
    await hub_metrics.refresh()
    return Response(generate_latest(hub_metrics.REGISTRY), content_type=CONTENT_TYPE_LATEST)


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)
