"""MCP server: the hub's human-in-the-loop tools for any agent that speaks MCP.

Two forms, one set of tools (``tools.py``), both built on the SDK so that each MCP client is
an agent in the hub like any other: ``lineup mcp`` on stdio (``stdio.py``, run on the
agent's machine) and streamable HTTP at ``/mcp/`` inside the hub (``http.py``), attached
here as a plugin through the ``lineup.plugins`` entry points. The ``mcp`` package is an
optional extra; without it the hub runs and ``/mcp/`` is simply absent.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import AsyncGenerator

from quart import Quart

logger = logging.getLogger(__name__)

EXTENSION_KEY = "lineup.mcp_server"


def init_app(app: Quart) -> None:
    if importlib.util.find_spec("mcp") is None:
        logger.info("MCP over HTTP is off: install the `mcp` extra (pip install lineup-hub[mcp])")
        return
    from hub.host.settings import settings_of
    from plugins.mcp_server.http import McpOverHttp

    endpoint = McpOverHttp(app.asgi_app, settings_of(app))
    app.extensions[EXTENSION_KEY] = endpoint
    app.asgi_app = endpoint  # type: ignore[method-assign]

    @app.while_serving
    async def _run_endpoint() -> AsyncGenerator[None, None]:
        async with endpoint.running():
            yield


__all__ = ["EXTENSION_KEY", "init_app"]
