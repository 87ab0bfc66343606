"""The floor: what this machine does with no hub in the way, measured in the same run.

* A bare WebSocket server under hypercorn (an ASGI app of a dozen lines) that echoes a
  frame back, or broadcasts it to every connected socket: the network and server floor for
  latency, fan-out and memory per idle connection.
* A bare durable insert + commit with the hub's own drivers (asyncpg; aiosqlite with the
  hub's pragmas): the storage floor for ingest.

Run as a process: ``python -m benchmarks.floor serve PORT``.
"""

from __future__ import annotations

import asyncio
import sys
import time
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

    from hub.web.websocket_compression import decline_permessage_deflate

    decline_permessage_deflate()  # as the hub does: the floor is the same server, bare
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    await hypercorn_serve(echo_app, config)  # type: ignore[arg-type]


async def echo_round_trips(url: str, count: int = 2000) -> dict[str, float]:
    samples = []
    async with websockets.connect(url) as socket:
        for _ in range(count):
            started = time.perf_counter()
            await socket.send("ping")
            await socket.recv()
            samples.append((time.perf_counter() - started) * 1000)
    return summary(samples[count // 10 :])  # the first tenth warms up


async def commit_floor(database_url: str, writers: int, seconds: float) -> dict[str, float]:
    """Concurrent single-row durable inserts, each its own committed transaction."""
    latencies: list[float] = []
    done = 0
    deadline = time.perf_counter() + seconds
    if database_url.startswith("sqlite"):
        import aiosqlite

        path = database_url.removeprefix("sqlite://").split("?")[0] + ".floor"
        async with aiosqlite.connect(path) as connection:
            await connection.execute("PRAGMA journal_mode=WAL")
            await connection.execute("PRAGMA synchronous=NORMAL")
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, body TEXT)"
            )
            await connection.commit()
            lock = asyncio.Lock()  # one SQLite connection: writers take turns, as in the hub

            async def sqlite_writer() -> None:
                nonlocal done
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    async with lock:
                        await connection.execute("INSERT INTO floor (body) VALUES ('x')")
                        await connection.commit()
                    latencies.append((time.perf_counter() - started) * 1000)
                    done += 1

            await asyncio.gather(*(sqlite_writer() for _ in range(writers)))
    else:
        import asyncpg

        url = database_url.replace("postgres://", "postgresql://", 1).split("?")[0]
        pool = await asyncpg.create_pool(url, min_size=min(writers, 20), max_size=min(writers, 20))
        try:
            await pool.execute(
                "CREATE TABLE IF NOT EXISTS floor (id BIGSERIAL PRIMARY KEY, body TEXT)"
            )

            async def postgres_writer() -> None:
                nonlocal done
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    await pool.execute("INSERT INTO floor (body) VALUES ('x')")
                    latencies.append((time.perf_counter() - started) * 1000)
                    done += 1

            await asyncio.gather(*(postgres_writer() for _ in range(writers)))
        finally:
            await pool.close()
    return {"per_s": done / seconds, **summary(latencies)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        asyncio.run(serve(int(sys.argv[2])))
