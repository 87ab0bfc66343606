"""The people's surface: the pages, the JSON API and its docs, and the client WebSocket.

``create_app`` (``hub.host.app``) attaches it with ``init_app``, as it attaches the
plugins; the templates and static files under this package are the app's own.
"""

from __future__ import annotations

from quart import Quart

from hub.web import api, api_docs, client_socket, pages


def init_app(app: Quart) -> None:
    pages.init_app(app)
    api.init_app(app)
    api_docs.init_app(app)
    client_socket.init_app(app)


__all__ = ["init_app"]
