"""The browser-hardening headers on every response of the app, not only the pages.

JSON answers, error bodies, ``/healthz``, ``/metrics`` and static files get the same
Content-Security-Policy and ``nosniff`` as the pages: a JSON body holding agent text that a
browser is tricked into rendering as HTML still cannot run a script or be framed. The
header values are defined once, in ``hub.web.pages.security``; a response that set its own
(a sandboxed artifact preview) keeps it.
"""

from __future__ import annotations

from quart import Quart, Response

from hub.web.pages.security import harden


def init_app(app: Quart) -> None:
    @app.after_request
    async def _harden_every_response(response: Response) -> Response:
        return harden(response)
