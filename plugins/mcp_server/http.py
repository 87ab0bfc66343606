"""The MCP tools over streamable HTTP at ``/mcp/``, inside the hub process.

Each agent credential gets its own MCP server, backed by an SDK agent that connects to this
same hub's ``/lap/v0.1``. Going through the gateway rather than calling the core directly
keeps one path for everything an agent does: the gateway alone turns uplinks into events
(validation, idempotency, workspace scope), keeps presence, replays missed downlinks and
closes the socket when the credential is revoked; the stdio server and this one run the
very same tools on the very same SDK. The loopback hop costs well under a millisecond,
next to a person's decision that takes seconds to hours.

The credential is checked on every request (a revoked one is refused at once). The agent
is online while its client has a request open (a waiting tool call, the event stream) and
for ``mcp_idle_s`` after the last one; then its MCP sessions and socket close, and the next
request starts them again. DNS-rebinding protection is off: it guards servers that trust
whoever can reach them, and every request here must carry the credential as a bearer
token, which a rebinding page does not have.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from hypercorn.typing import ASGIFramework, ASGIReceiveCallable, ASGISendCallable, Scope
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from hub.config import Settings
from hub.core.agents.registry import agent_for_credential
from hub.core.errors import HubError, Unauthorized
from hub.host.headers import hardened_send
from hub.sdk import Agent
from plugins.mcp_server.tools import Toolbox, build_server

logger = logging.getLogger(__name__)

MOUNT = "/mcp"
OPEN_TIMEOUT_S = 30.0


@dataclass
class _Served:
    """One credential's MCP server and the SDK agent behind it."""

    agent: Agent
    app: ASGIApp
    runner: asyncio.Task[None]
    stop: asyncio.Event
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class McpOverHttp:
    """ASGI middleware in front of the hub's Quart app: ``/mcp`` and below go to MCP."""

    # What the isolation matrix (tests/web/api/test_route_matrix.py) finds in the app's
    # ASGI chain: the path this layer serves, and the layer it passes the rest to.
    mount = MOUNT

    def __init__(self, inner: ASGIFramework, settings: Settings) -> None:
        self.inner = inner
        self.settings = settings
        self.served: dict[str, _Served] = {}
        # One lock per credential: a slow start of one agent never holds up another's.
        self._opening: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        path = str(scope.get("path") or "")
        if scope["type"] != "http" or not (path == MOUNT or path.startswith(MOUNT + "/")):
            await self.inner(scope, receive, send)
            return
        # Quart's after_request never sees these answers: harden them on the way out.
        send = hardened_send(send)
        try:
            credential = _bearer(scope)
            await agent_for_credential(credential)
            served = await self._served(credential)
        except HubError as error:
            await _refuse(send, error)
            return
        inner_path = path[len(MOUNT) :] or "/"
        inner_scope: dict[str, Any] = dict(scope)
        inner_scope["path"] = inner_path
        inner_scope["raw_path"] = inner_path.encode()
        inner_scope["root_path"] = str(scope.get("root_path") or "") + MOUNT
        served.busy += 1
        try:
            await served.app(inner_scope, receive, send)  # type: ignore[arg-type]
        finally:
            served.busy -= 1
            served.last_used = time.monotonic()

    async def _served(self, credential: str) -> _Served:
        key = hashlib.sha256(credential.encode()).hexdigest()
        async with self._opening[key]:
            served = self.served.get(key)
            if served is None or served.runner.done():
                served = await self._open(credential, key)
                self.served[key] = served
            served.last_used = time.monotonic()
            return served

    async def _open(self, credential: str, key: str) -> _Served:
        agent = Agent(
            self._own_url(),
            credential=credential,
            profile=f"mcp-http-{key[:16]}",
            state_dir=self.settings.data_dir / "mcp-agents",
        )
        box = Toolbox.for_agent(agent, self.settings.mcp_wait_s)
        server = build_server(box)
        app = server.streamable_http_app(
            streamable_http_path="/",
            session_idle_timeout=self.settings.mcp_idle_s,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        try:
            async with asyncio.timeout(OPEN_TIMEOUT_S):
                await agent.start()
        except TimeoutError:
            raise HubError("The hub's agent gateway did not answer in time.") from None
        stop = asyncio.Event()
        started = asyncio.Event()
        runner = asyncio.create_task(
            _serve_sessions(server, started, stop), name=f"mcp-http-{key[:8]}"
        )
        await started.wait()
        logger.info("MCP over HTTP: agent %s online", agent.agent_id)
        return _Served(agent, app, runner, stop)

    def _own_url(self) -> str:
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(
            self.settings.host, self.settings.host
        )
        return f"http://{f'[{host}]' if ':' in host else host}:{self.settings.port}"

    async def close_idle(self) -> None:
        now = time.monotonic()
        for key, served in list(self.served.items()):
            if served.busy == 0 and now - served.last_used >= self.settings.mcp_idle_s:
                del self.served[key]
                await _close(served)

    async def close_all(self) -> None:
        served, self.served = list(self.served.values()), {}
        for one in served:
            await _close(one)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Close idle agents while serving; close every one before the hub stops."""
        sweeper = asyncio.create_task(self._sweep_idle(), name="mcp-http-idle")
        try:
            yield
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            await self.close_all()

    async def _sweep_idle(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, self.settings.mcp_idle_s / 4))
            await self.close_idle()


async def _serve_sessions(
    server: MCPServer[Toolbox], started: asyncio.Event, stop: asyncio.Event
) -> None:
    """Run ``server``'s MCP sessions (and its lifespan) from ``started`` until ``stop``."""
    async with server.session_manager.run():
        started.set()
        await stop.wait()


async def _close(served: _Served) -> None:
    served.stop.set()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await served.runner
    await served.agent.close()
    logger.info("MCP over HTTP: agent %s offline", served.agent.agent_id)


def _bearer(scope: Scope) -> str:
    headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])  # type: ignore[call-overload]
    for name, value in headers:
        if name.lower() == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return str(token.strip())
    raise Unauthorized(
        "MCP at /mcp/ needs the agent credential as a bearer token.",
        code="credential_required",
        hint="Send `Authorization: Bearer <agent credential>`; docs/mcp.md shows how to get "
        "one with a pairing code.",
    )


async def _refuse(send: ASGISendCallable, error: HubError) -> None:
    """Answer with ``error`` and close the connection.

    The request's body is never read (a stranger's upload is not worth taking in), and
    hypercorn closes a connection whose request it has not read to the end. Without
    ``Connection: close`` a client reusing the connection may send its next request just
    as it closes, and get no answer at all."""
    body = json.dumps({"error": error.to_dict()}).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if error.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="lineup"'))
    response: Any = {"type": "http.response.start", "status": error.status, "headers": headers}
    await send(response)
    await send({"type": "http.response.body", "body": body, "more_body": False})
