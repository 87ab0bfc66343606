"""A LAP/0.1 client with no SDK, speaking raw JSON frames: what any third party would write.

It runs over a real socket (``websockets``) or Quart's test client; both only need
``send(text)`` and a way to receive the next text frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ulid import ULID
from websockets.asyncio.client import ClientConnection, connect

ANSWER_TYPES = ("ack", "error", "warning")


def lap_url(hub_url: str) -> str:
    return hub_url.replace("http://", "ws://", 1) + "/lap/v0.1"


class RawAgent:
    def __init__(
        self, send: Callable[[str], Awaitable[None]], receive: Callable[[], Awaitable[Any]]
    ) -> None:
        self._send = send
        self._receive = receive
        self.downlinks: list[dict[str, Any]] = []  # frames with a log sequence, in arrival order
        self.others: list[dict[str, Any]] = []  # every other frame not asked for by id
        self.heartbeat_interval_s: float | None = None  # from the welcome, once greeted

    async def send_text(self, text: str) -> None:
        await self._send(text)

    async def send(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        **fields: Any,
    ) -> str:
        envelope_id = id or f"up_{ULID()}"
        envelope = {"id": envelope_id, "type": kind, "version": "0.1", "payload": payload or {}}
        envelope.update(fields)
        await self._send(json.dumps(envelope, ensure_ascii=False))  # UTF-8, as adapters send
        return envelope_id

    async def recv(self, within: float = 5.0) -> dict[str, Any]:
        raw = await asyncio.wait_for(self._receive(), within)
        frame: dict[str, Any] = json.loads(raw)
        return frame

    async def answer(self, envelope_id: str | None, within: float = 5.0) -> dict[str, Any]:
        """The ack, error or warning answering ``envelope_id``; other frames are kept."""
        async with asyncio.timeout(within):
            while True:
                frame = await self.recv(within)
                if frame["type"] in ANSWER_TYPES and frame["payload"].get("id") == envelope_id:
                    return frame
                self._keep(frame)

    async def call(
        self, kind: str, payload: dict[str, Any] | None = None, **fields: Any
    ) -> dict[str, Any]:
        return await self.answer(await self.send(kind, payload, **fields))

    async def frame_of_type(self, kind: str, within: float = 5.0) -> dict[str, Any]:
        for frame in self.downlinks + self.others:
            if frame["type"] == kind:
                self._forget(frame)
                return frame
        async with asyncio.timeout(within):
            while True:
                frame = await self.recv(within)
                if frame["type"] == kind:
                    return frame
                self._keep(frame)

    async def hello(self, **payload: Any) -> dict[str, Any]:
        """Send agent.hello; returns the welcome (an agent.paired before it is kept)."""
        await self.send("agent.hello", payload)
        welcome = await self.frame_of_type("agent.welcome")
        self.heartbeat_interval_s = welcome["payload"]["heartbeatIntervalS"]
        return welcome

    @contextlib.asynccontextmanager
    async def beating(self) -> AsyncIterator[None]:
        """Heartbeats every interval meanwhile, as a live adapter sends them while it waits
        for work: the hub closes a greeted socket silent for three intervals or the hello
        deadline. Their acks are kept with the other frames."""
        interval = self.heartbeat_interval_s
        assert interval, "greeted first: the welcome gives the interval"

        async def beat() -> None:
            while True:
                await self.send("agent.heartbeat")
                await asyncio.sleep(interval)

        beats = asyncio.create_task(beat())
        try:
            yield
        finally:
            beats.cancel()
            await asyncio.gather(beats, return_exceptions=True)

    async def downlink(self, within: float = 5.0) -> dict[str, Any]:
        """The next frame carrying a log sequence."""
        if self.downlinks:
            return self.downlinks.pop(0)
        async with asyncio.timeout(within):
            while True:
                frame = await self.recv(within)
                if isinstance(frame.get("sequence"), int):
                    return frame
                self.others.append(frame)

    async def quiet(self, seconds: float) -> list[dict[str, Any]]:
        """Every frame that arrives within ``seconds`` (none, if all was delivered once).

        Once greeted, it sends heartbeats meanwhile, as an adapter does, so that the hub
        does not close a socket silent for longer than it allows; their acks are not kept.
        """
        frames = []
        beats: set[str] = set()
        every = self.heartbeat_interval_s / 2 if self.heartbeat_interval_s else seconds
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while True:
                    if self.heartbeat_interval_s:
                        beats.add(await self.send("agent.heartbeat"))
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(every):
                            while True:
                                frame = await self.recv(seconds)
                                if frame["type"] != "ack" or frame["payload"]["id"] not in beats:
                                    frames.append(frame)
        return frames

    def _keep(self, frame: dict[str, Any]) -> None:
        target = self.downlinks if isinstance(frame.get("sequence"), int) else self.others
        target.append(frame)

    def _forget(self, frame: dict[str, Any]) -> None:
        for frames in (self.downlinks, self.others):
            if frame in frames:
                frames.remove(frame)
                return


@contextlib.asynccontextmanager
async def raw_agent(
    hub_url: str, credential: str | None = None
) -> AsyncIterator[tuple[RawAgent, ClientConnection]]:
    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    async with connect(
        lap_url(hub_url), additional_headers=headers, proxy=None, open_timeout=10
    ) as socket:
        yield RawAgent(socket.send, socket.recv), socket
