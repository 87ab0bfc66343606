"""A stream server on 127.0.0.1 with an event loop in a thread of its own, for the fake
model APIs: a synchronous test, an async one and a CLI's subprocess all reach it the same
way, while the test's own loop waits on the CLI.

Stopping it closes every connection's socket before its loop ends. Python 3.11's
``Server.close`` leaves accepted connections open, its ``wait_closed`` does not wait for
them (3.12 waits, 3.13 adds ``close_clients``), and a connection accepted on the turn the
server closes gets a transport that fails halfway with its socket open. A connection a CLI
kept alive, or one made just as the test ended, would otherwise be left open, and the
garbage collector reports it as an unclosed transport in whichever test runs then.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
STOP_BOUND_S = 10.0


class LoopbackServer:
    """Serves ``handler`` (one call per connection) while started; ``port`` once it is."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self.port = 0

    def start(self) -> int:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        ).result(timeout=STOP_BOUND_S)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def stop(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=STOP_BOUND_S)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=STOP_BOUND_S)
            self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            await self._handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away, or the server is stopping: the end of it
        finally:
            del self._connections[task]
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _close(self) -> None:
        assert self._server is not None
        # Accept no more, then let the connections accepted already get their transports
        # (a turn of the loop) before the server closes: on 3.11 a transport made for a
        # closed server fails halfway, its socket held open and never closed.
        for sock in self._server.sockets:
            self._loop.remove_reader(sock.fileno())
        await asyncio.sleep(0)
        self._server.close()
        # Every transport counts until its socket is closed, and its handler starts a turn
        # after it is made: the connections are dropped as they appear until none is
        # left. A dropped one ends its handler with the end of its input, or a read error.
        async with asyncio.timeout(STOP_BOUND_S):
            while self._server._active_count:  # what 3.12's wait_closed waits for
                for writer in self._connections.values():
                    writer.transport.abort()
                await asyncio.sleep(0.01)
            await asyncio.gather(*self._connections)
