"""The client's address: what every per-source limit counts by and the audit trail records.

Behind a reverse proxy every connection comes from the proxy, so one budget of sign-in
attempts would be shared by everyone and the audit trail would name the proxy. The proxy
says who the client is in ``X-Forwarded-For``, but so can anyone who reaches the hub
directly: the header is believed only for the hops the operator declares
(``LINEUP_TRUSTED_PROXY_HOPS``), by hypercorn's ``ProxyFixMiddleware`` around the whole app,
which rewrites the ASGI scope before anything reads it. With no trusted hop (the default)
the app is not wrapped at all, and a forged header is only a header.

Everything asks ``client_address()`` rather than reading the connection itself, so there is
one answer per request, the same for a limit and for the trail.
"""

from __future__ import annotations

from hypercorn.middleware import ProxyFixMiddleware
from quart import Quart, has_request_context, request, websocket


def client_address() -> str | None:
    """The address of the client of this request or WebSocket, as far as it can be trusted."""
    connection = request if has_request_context() else websocket
    address: str | None = connection.remote_addr
    return address


def init_app(app: Quart, *, trusted_proxy_hops: int) -> None:
    """Believe ``X-Forwarded-For``, ``-Proto`` and ``-Host`` from ``trusted_proxy_hops``
    proxies. Called after every other wrapper of ``app.asgi_app``: the rewritten scope must
    be the one all of them see."""
    if trusted_proxy_hops > 0:
        app.asgi_app = ProxyFixMiddleware(  # type: ignore[method-assign]
            app.asgi_app, mode="legacy", trusted_hops=trusted_proxy_hops
        )
