"""The browser-hardening headers on every response of the hub, not only the pages.

JSON answers, error bodies, ``/healthz``, ``/metrics`` and static files get the same
Content-Security-Policy and ``nosniff`` as the pages: a JSON body holding agent text that a
browser is tricked into rendering as HTML still cannot run a script or be framed. The
header values are defined once, in ``hub.web.pages.security``; a response that set its own
(a sandboxed artifact preview) keeps it.

ASGI apps mounted beside Quart (MCP at ``/mcp/``) answer without passing through Quart's
``after_request``; they send through ``hardened_send``, which adds the same headers.
"""

from __future__ import annotations

from typing import Any

from hypercorn.typing import ASGISendCallable, ASGISendEvent
from quart import Quart, Response

from hub.web.pages.security import HARDENING_HEADERS, harden


def init_app(app: Quart) -> None:
    @app.after_request
    async def _harden_every_response(response: Response) -> Response:
        return harden(response)


def hardened_send(send: ASGISendCallable) -> ASGISendCallable:
    """``send`` that adds the hardening headers a response did not set itself."""

    async def send_hardened(message: ASGISendEvent) -> None:
        if message["type"] == "http.response.start":
            headers: list[tuple[bytes, bytes]] = list(message.get("headers") or [])
            present = {name.lower() for name, _ in headers}
            headers += [
                (name.lower().encode(), value.encode())
                for name, value in HARDENING_HEADERS.items()
                if name.lower().encode() not in present
            ]
            started: Any = {**message, "headers": headers}
            message = started
        await send(message)

    return send_hardened
