"""A loopback HTTP proxy that adds a bearer credential to every request it passes on.

The MCP conformance suite connects to a server URL and cannot send an ``Authorization``
header; the hub's ``/mcp/`` wants the agent credential as a bearer token. This proxy, run
by the test on a free loopback port, forwards each request to the hub with the credential
added and streams the answer back as it comes (server-sent events included), so the suite
meets the real endpoint and nothing else changes. Every other header passes as sent
(``Origin`` too, which the hub checks), except the hop-by-hop ones.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
from hypercorn.asyncio import serve
from hypercorn.config import Config

from hub.testing import free_port

_HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"transfer-encoding",
    b"upgrade",
    b"host",
    b"content-length",
    b"authorization",
    b"date",  # the proxy's own server stamps these
    b"server",
}


class BearerProxy:
    """An ASGI app forwarding to ``upstream`` with ``Authorization: Bearer credential``."""

    def __init__(self, upstream: str, credential: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.credential = credential
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        headers.append((b"authorization", f"Bearer {self.credential}".encode()))
        query = scope.get("query_string", b"").decode()
        url = self.upstream + scope["path"] + (f"?{query}" if query else "")
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        forwarding = asyncio.create_task(self._forward(request, send))
        # A client that goes away (an event stream it is done with) ends the upstream call.
        gone = asyncio.create_task(_disconnected(receive))
        await asyncio.wait({forwarding, gone}, return_when=asyncio.FIRST_COMPLETED)
        for task in (forwarding, gone):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError, httpx.HTTPError):
                await task

    async def _forward(self, request: httpx.Request, send: Any) -> None:
        response = await self.client.send(request, stream=True)
        try:
            headers = [
                (k.encode(), v.encode())
                for k, v in response.headers.multi_items()
                if k.lower().encode() not in _HOP_BY_HOP
            ]
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": headers}
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


@contextlib.asynccontextmanager
async def bearer_proxy(upstream: str, credential: str, port: int = 0) -> AsyncIterator[str]:
    """Serve a ``BearerProxy`` to ``upstream`` on loopback (on ``port``, else a free one);
    yields its base URL."""
    proxy = BearerProxy(upstream, credential)
    config = Config()
    port = port or free_port()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 1
    stop = asyncio.Event()
    server = asyncio.create_task(serve(proxy, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    try:
        await _listening(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(server, 10)
        await proxy.client.aclose()


async def _listening(port: int, within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return
