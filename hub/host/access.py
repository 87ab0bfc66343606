"""Each HTTP request observed: its id, its access log line and its metrics.

The id is the caller's ``X-Request-Id`` when it looks like one (a proxy in front may have
set it, so the proxy's log and the hub's meet), else a new one; the response carries it
back in the same header, and every log line written while the request is handled carries
it too (``hub.log_format.REQUEST_ID``).

The access line names the route by its URL rule, as the metrics do: never the raw path and
never the query string, where a signed link's token or a reset code would be.
"""

from __future__ import annotations

import logging
import re
import secrets
import time

from quart import Quart, Response, g, request

from hub.host.metrics import HTTP_DURATION, HTTP_REQUESTS
from hub.log_format import REQUEST_ID

REQUEST_ID_HEADER = "X-Request-Id"
# Printable, short and free of anything a log parser would split on.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{8,128}")
# Requests that matched no route share one label, whatever path was asked for.
UNMATCHED = "(unmatched)"

access_log = logging.getLogger("hub.access")


def request_id_of(incoming: str | None) -> str:
    if incoming and _SANE_REQUEST_ID.fullmatch(incoming):
        return incoming
    return secrets.token_hex(16)


def init_app(app: Quart) -> None:
    @app.before_request
    async def _start() -> None:
        g.request_started = time.perf_counter()
        g.request_id = request_id_of(request.headers.get(REQUEST_ID_HEADER))
        REQUEST_ID.set(g.request_id)

    @app.after_request
    async def _observe(response: Response) -> Response:
        started = g.get("request_started")
        if started is None:  # a response made before the request was looked at
            return response
        elapsed = time.perf_counter() - started
        route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        HTTP_REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        HTTP_DURATION.labels(request.method, route).observe(elapsed)
        response.headers[REQUEST_ID_HEADER] = g.request_id
        access_log.info(
            "%s %s %d %.1fms %s",
            request.method,
            route,
            response.status_code,
            elapsed * 1000,
            g.request_id,
        )
        return response
