"""Coding agents people already run (Claude Code, Codex), gated through their own hooks.

The CLI's permission hooks run ``lineup-hook`` on the agent's machine, which posts each
event to ``/hooks/v1/<cli>`` here (``endpoint.py``); each session becomes a task and each
call that needs a person an approval card of the exact command (``sessions.py``,
``cards.py``, ``risk.py``), answered on any surface. Attached as a plugin through the
``lineup.plugins`` entry points, like the other connectors.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from quart import Quart

EXTENSION_KEY = "lineup.coding_agents"


def init_app(app: Quart) -> None:
    from hub.host.settings import settings_of
    from plugins.coding_agents.endpoint import HookEndpoint

    endpoint = HookEndpoint(app.asgi_app, settings_of(app))
    app.extensions[EXTENSION_KEY] = endpoint
    app.asgi_app = endpoint  # type: ignore[method-assign]

    @app.while_serving
    async def _run_endpoint() -> AsyncGenerator[None, None]:
        async with endpoint.running():
            yield


__all__ = ["EXTENSION_KEY", "init_app"]
