"""Query strings and forms holding NUL are refused before any view runs (see
``hub.core.text``); JSON bodies are checked where they are parsed (``api.base``)."""

from __future__ import annotations

from quart import Quart, request, websocket

from hub.core.text import refuse_nul


def init_app(app: Quart) -> None:
    @app.before_request
    async def _refuse_nul_in_forms_and_queries() -> None:
        refuse_nul(dict(request.args.items(multi=True)), "query string")
        if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.form
            refuse_nul(dict(form.items(multi=True)), "form")

    @app.before_websocket
    async def _refuse_nul_in_socket_queries() -> None:
        refuse_nul(dict(websocket.args.items(multi=True)), "query string")
