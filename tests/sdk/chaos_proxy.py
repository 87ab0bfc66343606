"""A TCP relay between agents and the hub that can cut any connection at any moment.

Cutting aborts both halves at once (no close handshake), mid-frame if it happens to be:
an uplink may reach the hub while its ``ack`` is lost, a downlink may be lost in flight.
That is the failure the SDK's pending uplinks, replay and deduplication must absorb.
"""

from __future__ import annotations

import asyncio
import contextlib
import random

from hub.testing import free_port


class ChaosProxy:
    def __init__(self, target_port: int, rng: random.Random | None = None) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.kills = 0
        # While set, connections are cut as they open: an agent that cannot come back.
        self.refusing = False
        self._rng = rng or random.Random()
        self._links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ChaosProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for client, upstream in list(self._links):
            client.transport.abort()
            upstream.transport.abort()
        await self._server.wait_closed()

    @property
    def live_links(self) -> int:
        return len(self._links)

    def kill_one(self) -> bool:
        """Cut one live connection chosen at random; False if none is open."""
        if not self._links:
            return False
        client, upstream = self._rng.choice(sorted(self._links, key=id))
        self._links.discard((client, upstream))
        client.transport.abort()
        upstream.transport.abort()
        self.kills += 1
        return True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        link = (writer, up_writer)
        self._links.add(link)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._links.discard(link)
            writer.transport.abort()
            up_writer.transport.abort()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    with contextlib.suppress(Exception):
        sink.close()
