"""How the hub's log lines look: plain text for a terminal, or one JSON object per line.

``LINEUP_LOG_FORMAT=json`` is for log collectors (Loki, Elasticsearch, journald's JSON
export): each line is an object with ``time``, ``level``, ``logger`` and ``message``, and
``requestId`` while an HTTP request is being handled, so every line one request caused can
be found by the id its response carried in ``X-Request-Id``.

The request id lives in a context variable the host sets per request; this module imports
only the standard library, because the agent-side commands configure logging too.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

# The id of the HTTP request this code runs for, if any (set by hub.host.access).
REQUEST_ID: ContextVar[str | None] = ContextVar("lineup_request_id", default=None)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RequestIdFilter(logging.Filter):
    """Puts the current request id on each record, so either format can show it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            line["requestId"] = request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: str, log_format: str) -> None:
    """One handler on the root logger, in the chosen format."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    logging.basicConfig(level=level, handlers=[handler])
