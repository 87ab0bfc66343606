"""The floor: what this machine does with no hub in the way, measured in the same run.

* A bare WebSocket server under hypercorn (an ASGI app of a dozen lines) that echoes a
  frame back, or broadcasts it to every connected socket: the network and server floor for
  latency, fan-out and memory per idle connection.
* A bare durable insert + commit with the hub's own drivers (asyncpg; aiosqlite with the
  hub's pragmas): the storage floor for ingest.

The floor of a latency taken at a rate (an uplink at 50 events/s) is taken at that rate
too: an echo and a commit each on the same schedule. Back to back, the machine never
sleeps between them, and that floor is lower (the report shows both).

Run as a process: ``python -m benchmarks.floor serve PORT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import websockets

from benchmarks.stats import summary

_sockets: set[Any] = set()


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "websocket":
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    queue: asyncio.Queue[str] = asyncio.Queue()
    _sockets.add(queue)
    sender = asyncio.create_task(_drain(queue, send))
    try:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text") or ""
            if text.startswith("broadcast:"):
                for peer in list(_sockets):
                    peer.put_nowait(text)
            else:
                await send({"type": "websocket.send", "text": text})
    finally:
        _sockets.discard(queue)
        sender.cancel()


async def _drain(queue: asyncio.Queue[str], send: Any) -> None:
    while True:
        await send({"type": "websocket.send", "text": await queue.get()})


async def serve(port: int) -> None:
    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    from hub.host.websocket_compression import decline_permessage_deflate

    decline_permessage_deflate()  # as the hub does: the floor is the same server, bare
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    await hypercorn_serve(echo_app, config)  # type: ignore[arg-type]


async def echo_round_trips(url: str, count: int = 2000) -> dict[str, float]:
    """Round trips back to back: the floor at its lowest, the machine kept busy."""
    samples = []
    async with websockets.connect(url) as socket:
        for _ in range(count):
            started = time.perf_counter()
            await socket.send("ping")
            await socket.recv()
            samples.append((time.perf_counter() - started) * 1000)
    return summary(samples[count // 10 :])  # the first tenth warms up


async def paced_echo_round_trips(url: str, rate: float, seconds: float) -> dict[str, float]:
    """Round trips at ``rate`` a second: the floor of a latency measured at that rate.

    Between two events at 50/s the processes sleep, and waking them costs more than the
    work: here an echo at 50/s took five times as long as one back to back, a commit
    eight times. A figure taken at a rate is divided by a floor taken at the same rate."""
    async with websockets.connect(url) as socket:

        async def round_trip() -> None:
            await socket.send("ping")
            await socket.recv()

        return await _paced(round_trip, rate, seconds)


async def _paced(
    operation: Callable[[], Awaitable[None]], rate: float, seconds: float
) -> dict[str, float]:
    """Time ``operation`` started on a fixed schedule of ``rate`` a second (late ones go at
    once, as an open-loop load does)."""
    samples = []
    started = time.perf_counter()
    for n in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, started + n / rate - time.perf_counter()))
        began = time.perf_counter()
        await operation()
        samples.append((time.perf_counter() - began) * 1000)
    return summary(samples[len(samples) // 10 :])


async def commit_floor(database_url: str, writers: int, seconds: float) -> dict[str, float]:
    """Concurrent single-row durable inserts, each its own committed transaction."""
    latencies: list[float] = []
    done = 0
    deadline = time.perf_counter() + seconds
    async with durable_inserts(database_url, writers) as insert:

        async def writer() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                await insert()
                latencies.append((time.perf_counter() - started) * 1000)
                done += 1

        await asyncio.gather(*(writer() for _ in range(writers)))
    return {"per_s": done / seconds, **summary(latencies)}


async def paced_commit_floor(database_url: str, rate: float, seconds: float) -> dict[str, float]:
    """One durable single-row insert at a time, at ``rate`` a second (see
    ``paced_echo_round_trips``)."""
    async with durable_inserts(database_url, 1) as insert:
        return await _paced(insert, rate, seconds)


@contextlib.asynccontextmanager
async def durable_inserts(
    database_url: str, writers: int
) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """A function that inserts one row and commits it, with the hub's own drivers: for
    SQLite one connection with the hub's pragmas, its writers taking turns as in the hub;
    for PostgreSQL a pool of up to 20 connections."""
    if database_url.startswith("sqlite"):
        import aiosqlite

        from hub.core.store.database import SQLITE_PRAGMAS

        path = database_url.removeprefix("sqlite://").split("?")[0] + ".floor"
        async with aiosqlite.connect(path) as connection:
            # The hub's own pragmas, so the floor commits as durably as the hub does.
            for pragma in ("journal_mode", "synchronous"):
                await connection.execute(f"PRAGMA {pragma}={SQLITE_PRAGMAS[pragma]}")
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, body TEXT)"
            )
            await connection.commit()
            lock = asyncio.Lock()

            async def sqlite_insert() -> None:
                async with lock:
                    await connection.execute("INSERT INTO floor (body) VALUES ('x')")
                    await connection.commit()

            yield sqlite_insert
    else:
        import asyncpg

        url = database_url.replace("postgres://", "postgresql://", 1).split("?")[0]
        pool = await asyncpg.create_pool(url, min_size=min(writers, 20), max_size=min(writers, 20))
        try:
            await pool.execute(
                "CREATE TABLE IF NOT EXISTS floor (id BIGSERIAL PRIMARY KEY, body TEXT)"
            )

            async def postgres_insert() -> None:
                await pool.execute("INSERT INTO floor (body) VALUES ('x')")

            yield postgres_insert
        finally:
            await pool.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        asyncio.run(serve(int(sys.argv[2])))
