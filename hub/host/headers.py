"""The browser-hardening headers on every response of the hub, not only the pages.

Agent content is escaped by Jinja and set with ``textContent`` in JavaScript; the
Content-Security-Policy is the second wall: no inline script, no script from elsewhere, no
plugin, no framing, forms only to this site. Should an escaping bug ever let markup
through, it still cannot run or phone home.

JSON answers, error bodies, ``/healthz``, ``/metrics`` and static files get the same headers
as the pages: a JSON body holding agent text that a browser is tricked into rendering as
HTML still cannot run a script or be framed. A response that set its own (a sandboxed
artifact preview) keeps it.

ASGI apps mounted beside Quart (MCP at ``/mcp/``) answer without passing through Quart's
``after_request``; they send through ``hardened_send``, which adds the same headers.
"""

from __future__ import annotations

from typing import Any

from hypercorn.typing import ASGISendCallable, ASGISendEvent
from quart import Quart, Response

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)

# Every response of the hub carries these, whatever serves it (Quart, or an ASGI app mounted
# beside it).
HARDENING_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def harden(response: Response) -> Response:
    for name, value in HARDENING_HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html":
        # Pages show private state; a shared computer's back button must not replay them.
        response.headers.setdefault("Cache-Control", "no-store")
    return response


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


__all__ = ["CONTENT_SECURITY_POLICY", "HARDENING_HEADERS", "harden", "hardened_send", "init_app"]
