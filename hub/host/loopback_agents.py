"""SDK agents the hub runs for clients that speak HTTP, one per credential, over loopback.

Some agents reach the hub with plain HTTP requests rather than a LAP socket of their own:
MCP over HTTP (``/mcp/``), and the permission hooks of coding agents (``/hooks/``). For
each credential the hub runs an SDK agent that connects to this same hub's ``/lap/v0.1``.
Going through the gateway rather than calling the core directly keeps one path for
everything an agent does: the gateway alone turns uplinks into events (validation,
idempotency, workspace scope), keeps presence, replays missed downlinks and closes the
socket when the credential is revoked. The loopback hop costs well under a millisecond.

The credential is checked on every request (a revoked one is refused at once). The agent is
online while its client has a request open and for ``idle_s`` after the last one ends; then
its socket closes, and the next request opens it again. Its state (position in the log,
unacknowledged uplinks, answers) is kept under the data directory, so an answer given
while it was closed, or while the hub was down, is found when it opens again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from hypercorn.typing import ASGISendCallable, Scope

from hub.config import Settings
from hub.core.agents.registry import agent_for_credential
from hub.core.errors import HubError, Unauthorized
from hub.sdk import Agent

logger = logging.getLogger(__name__)

OPEN_TIMEOUT_S = 30.0

T = TypeVar("T")


@dataclass
class Loopback(Generic[T]):
    """One credential's SDK agent, and what the client's protocol keeps beside it."""

    agent: Agent
    attached: T
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class LoopbackAgents(Generic[T]):
    """The open loopback agents of one kind of client (``name``: ``mcp-http``, ``hooks``).

    ``attach(agent)`` runs before the agent connects, so that no downlink passes before the
    client's handlers exist; ``started`` and ``stopping`` run after it connects and before
    it closes (an MCP server's sessions, say)."""

    def __init__(
        self,
        settings: Settings,
        *,
        name: str,
        idle_s: float,
        attach: Callable[[Agent], T],
        started: Callable[[T], Awaitable[None]] | None = None,
        stopping: Callable[[T], Awaitable[None]] | None = None,
    ) -> None:
        self.settings = settings
        self.name = name
        self.idle_s = idle_s
        self._attach = attach
        self._started = started
        self._stopping = stopping
        self.open: dict[str, Loopback[T]] = {}
        # One lock per credential: a slow start of one agent never holds up another's.
        self._opening: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    @contextlib.asynccontextmanager
    async def using(self, credential: str) -> AsyncIterator[Loopback[T]]:
        """The credential's agent, opened if need be, kept online while the block runs;
        ``HubError`` when the credential is not a live agent's."""
        await agent_for_credential(credential)
        served = await self._served(credential)
        served.busy += 1
        try:
            yield served
        finally:
            served.busy -= 1
            served.last_used = time.monotonic()

    async def _served(self, credential: str) -> Loopback[T]:
        key = hashlib.sha256(credential.encode()).hexdigest()
        async with self._opening[key]:
            served = self.open.get(key)
            if served is None or served.agent.closed:
                served = await self._open(credential, key)
                self.open[key] = served
            served.last_used = time.monotonic()
            return served

    async def _open(self, credential: str, key: str) -> Loopback[T]:
        agent = Agent(
            own_url(self.settings),
            credential=credential,
            profile=f"{self.name}-{key[:16]}",
            state_dir=self.state_dir,
        )
        attached = self._attach(agent)
        try:
            async with asyncio.timeout(OPEN_TIMEOUT_S):
                await agent.start()
        except TimeoutError:
            await agent.close()
            raise HubError("The hub's agent gateway did not answer in time.") from None
        if self._started is not None:
            await self._started(attached)
        logger.info("%s: agent %s online", self.name, agent.agent_id)
        return Loopback(agent, attached)

    @property
    def state_dir(self) -> Path:
        return self.settings.data_dir / f"{self.name}-agents"

    async def close_idle(self) -> None:
        now = time.monotonic()
        for key, served in list(self.open.items()):
            if served.busy == 0 and now - served.last_used >= self.idle_s:
                del self.open[key]
                await self._close(served)

    async def close_all(self) -> None:
        served, self.open = list(self.open.values()), {}
        for one in served:
            await self._close(one)

    async def _close(self, served: Loopback[T]) -> None:
        if self._stopping is not None:
            with contextlib.suppress(Exception):
                await self._stopping(served.attached)
        await served.agent.close()
        logger.info("%s: agent %s offline", self.name, served.agent.agent_id)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Close idle agents while serving; close every one before the hub stops."""
        sweeper = asyncio.create_task(self._sweep_idle(), name=f"{self.name}-idle")
        try:
            yield
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            await self.close_all()

    async def _sweep_idle(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, self.idle_s / 4))
            await self.close_idle()


def own_url(settings: Settings) -> str:
    """This hub as its own loopback clients reach it."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(settings.host, settings.host)
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.port}"


def bearer(scope: Scope, *, what: str, hint: str) -> str:
    """The bearer token of an ASGI request, or ``Unauthorized`` naming ``what`` needs it."""
    headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])  # type: ignore[call-overload]
    for name, value in headers:
        if name.lower() == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return str(token.strip())
    raise Unauthorized(
        f"{what} needs the agent credential as a bearer token.",
        code="credential_required",
        hint=hint,
    )


async def refuse(send: ASGISendCallable, error: HubError) -> None:
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
