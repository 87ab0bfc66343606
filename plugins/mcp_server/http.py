"""The MCP tools over streamable HTTP at ``/mcp/``, inside the hub process.

Each agent credential gets its own MCP server, backed by an SDK agent that connects to this
same hub's ``/lap/v0.1`` (``hub.host.loopback_agents``: one path for everything an agent
does); the stdio server and this one run the very same tools on the very same SDK. The
agent is online while its client has a request open (a waiting tool call, the event
stream) and for ``mcp_idle_s`` after the last one; then its MCP sessions and socket close,
and the next request starts them again. The SDK's DNS-rebinding protection (a list of
allowed hosts) is off: behind a proxy the hub's host names are the operator's business.
``Origin`` is checked here instead (``origins.py``), before the credential, and every request
must carry the credential as a bearer token, which a rebinding page does not have.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypercorn.typing import ASGIFramework, ASGIReceiveCallable, ASGISendCallable, Scope

from hub.config import Settings
from hub.core.errors import HubError
from hub.host.deferred_imports import import_off_the_loop
from hub.host.headers import hardened_send
from hub.host.loopback_agents import LoopbackAgents, bearer, refuse
from hub.sdk import Agent
from plugins.mcp_server.origins import AllowedOrigins

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp

    from plugins.mcp_server.tools import Toolbox

MOUNT = "/mcp"
# What imports the MCP SDK, 0.45 s of the 2.1 s `lineup serve` took to start: loaded by the
# first request to /mcp/, not by every hub (hub.host.deferred_imports).
_SDK_MODULES = ("plugins.mcp_server.tools", "plugins.mcp_server.replay")


@dataclass
class _Served:
    """One credential's MCP server, beside the SDK agent behind it."""

    server: MCPServer[Toolbox]
    app: ASGIApp
    stop: asyncio.Event
    runner: asyncio.Task[None] | None = None


class McpOverHttp:
    """ASGI middleware in front of the hub's Quart app: ``/mcp`` and below go to MCP."""

    # What the isolation matrix (tests/web/api/test_route_matrix.py) finds in the app's
    # ASGI chain: the path this layer serves, and the layer it passes the rest to.
    mount = MOUNT

    def __init__(self, inner: ASGIFramework, settings: Settings) -> None:
        self.inner = inner
        self.settings = settings
        self.origins = AllowedOrigins(settings)
        self.agents: LoopbackAgents[_Served] = LoopbackAgents(
            settings,
            name="mcp-http",
            idle_s=settings.mcp_idle_s,
            attach=self._attach,
            started=_start_sessions,
            stopping=_stop_sessions,
        )

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        path = str(scope.get("path") or "")
        if scope["type"] != "http" or not (path == MOUNT or path.startswith(MOUNT + "/")):
            await self.inner(scope, receive, send)
            return
        # Quart's after_request never sees these answers: harden them on the way out.
        send = hardened_send(send)
        async with contextlib.AsyncExitStack() as stack:
            try:
                self.origins.check(_header(scope, b"origin"))
                credential = bearer(
                    scope,
                    what="MCP at /mcp/",
                    hint="Send `Authorization: Bearer <agent credential>`; docs/mcp.md shows "
                    "how to get one with a pairing code.",
                )
                await import_off_the_loop(*_SDK_MODULES)
                served = await stack.enter_async_context(self.agents.using(credential))
            except HubError as error:
                await refuse(send, error)
                return
            inner_path = path[len(MOUNT) :] or "/"
            inner_scope: dict[str, Any] = dict(scope)
            inner_scope["path"] = inner_path
            inner_scope["raw_path"] = inner_path.encode()
            inner_scope["root_path"] = str(scope.get("root_path") or "") + MOUNT
            await served.attached.app(inner_scope, receive, send)  # type: ignore[arg-type]

    def _attach(self, agent: Agent) -> _Served:
        # Imported by now (``_SDK_MODULES``, before the credential is looked up).
        from mcp.server.transport_security import TransportSecuritySettings

        from plugins.mcp_server.replay import RECONNECT_AFTER_MS, RecentEvents
        from plugins.mcp_server.tools import Toolbox, build_server

        box = Toolbox.for_agent(
            agent, self.settings.mcp_wait_s, public_url=self.settings.resolved_public_url
        )
        server = build_server(box)
        app = server.streamable_http_app(
            streamable_http_path="/",
            event_store=RecentEvents(),
            retry_interval=RECONNECT_AFTER_MS,
            session_idle_timeout=self.settings.mcp_idle_s,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return _Served(server, app, asyncio.Event())

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Close idle agents while serving; close every one before the hub stops."""
        async with self.agents.running():
            yield


def _header(scope: Scope, name: bytes) -> str | None:
    headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])  # type: ignore[call-overload]
    return next((v.decode("latin-1") for k, v in headers if k.lower() == name), None)


async def _start_sessions(served: _Served) -> None:
    started = asyncio.Event()
    served.runner = asyncio.create_task(
        _serve_sessions(served.server, started, served.stop), name="mcp-http-sessions"
    )
    await started.wait()


async def _stop_sessions(served: _Served) -> None:
    served.stop.set()
    if served.runner is not None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await served.runner


async def _serve_sessions(
    server: MCPServer[Toolbox], started: asyncio.Event, stop: asyncio.Event
) -> None:
    """Run ``server``'s MCP sessions (and its lifespan) from ``started`` until ``stop``."""
    async with server.session_manager.run():
        started.set()
        await stop.wait()
