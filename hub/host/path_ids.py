"""Ids in a URL's path that no object of the hub can have read as "not found".

Every route names its objects ``ws``, ``workspace_id`` or ``<kind>_id``. A value longer than
any id the hub makes names nothing, and the ORM refuses to compare it with an id column at
all (a server error, not an answer); refusing it here, before any view runs, gives every
route, present and future, the same 404 an unknown id gets.
"""

from __future__ import annotations

from quart import Quart, request

from hub.core.errors import NotFound
from hub.core.ids import could_be_an_id


def _kind(argument: str) -> str | None:
    """``workspace`` for ``ws``, ``task`` for ``task_id``; None for other arguments."""
    if argument == "ws":
        return "workspace"
    return argument.removesuffix("_id") if argument.endswith("_id") else None


def init_app(app: Quart) -> None:
    # before_request, not url_value_preprocessor: Quart runs the latter for WebSockets too,
    # reading ``request`` where there is none. No WebSocket route has ids in its path.
    @app.before_request
    async def _refuse_impossible_ids() -> None:
        for argument, value in (request.view_args or {}).items():
            kind = _kind(argument)
            if kind is not None and not could_be_an_id(str(value)):
                raise NotFound(f"There is no {kind} with that id.", code=f"{kind}_not_found")
