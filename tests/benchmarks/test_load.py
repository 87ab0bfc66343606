"""The benchmark's load generators measure the hub, not their own shutdown.

The fan-out reader once stopped reading each socket after its last sample; the hub's
later events (agents of an earlier phase going offline) piled up unread, websockets
stopped reading those sockets, closing frames included, and every close waited out its
10 s timeout: 250 sockets per process outlasted the orchestrator, which reported a stall.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from benchmarks.load import reader

EXPECTED = 3
LATER = 40  # more than websockets' 16 unread frames, after which it stops reading


def _event(content: str) -> str:
    return json.dumps({"type": "message.created", "payload": {"content": content}})


async def test_a_reader_closes_promptly_when_events_keep_coming_after_its_samples() -> None:
    async def hub(socket: ServerConnection) -> None:
        for _ in range(EXPECTED):
            await socket.send(_event(f"bench:fan:{time.monotonic_ns()}"))
        for n in range(LATER):  # the workspace goes on living after the samples are in
            await socket.send(_event(f"other event {n}"))
        await socket.wait_closed()

    async with serve(hub, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        arguments: dict[str, Any] = {
            "url": f"http://127.0.0.1:{port}",
            "token": "token",
            "workspace": "ws",
            "after": 0,
            "tag": "fan",
            "expect": EXPECTED,
            "sockets": 4,
        }
        started = time.monotonic()
        async with asyncio.timeout(8):  # one close waiting out its timeout takes 10 s
            result = await reader(arguments)

    assert time.monotonic() - started < 8
    assert len(result["last"]) == EXPECTED * 4  # each socket's own stamps
