"""Where the memory of an idle agent connection goes: ``python -m benchmarks.memory [N]``.

Runs the hub in this process under ``tracemalloc``, opens N idle agent connections from a
``benchmarks.load idle`` process, lets them send heartbeats, and prints the allocations
that grew, per connection, grouped by the line that made them (innermost frame first).
``tracemalloc`` slows the hub down and keeps its own books, so the RSS printed here is
higher than in ``make bench``; use it to see *where*, and ``make bench`` for how much.

SQLite by default; PostgreSQL when ``LINEUP_TEST_DATABASE_URL`` names a server.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

from benchmarks.run import ROOT, Profile, Worker, _rss_kib, _say, _seed

HOLD_S = 12.0
HEARTBEAT_S = 2


async def probe(connections: int, top: int) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    from hub.config import load_settings
    from hub.host.app import create_app
    from hub.host.websocket_compression import decline_permessage_deflate
    from hub.testing import TestDatabases, free_port

    secret_key = "bench-secret-key-" + "b" * 32
    scratch = Path(tempfile.mkdtemp(prefix="lineup-memory-"))
    databases = TestDatabases(scratch, os.environ.get("LINEUP_TEST_DATABASE_URL"))
    url = await databases.create()
    profile = Profile(quick=True)
    profile.idle_agents = connections
    seed = await _seed(url, profile, secret_key)

    port = free_port()
    app = create_app(
        load_settings(
            database_url=url,
            secret_key=secret_key,
            heartbeat_interval_s=HEARTBEAT_S,
            data_dir=str(scratch / "hub"),
        )
    )
    decline_permessage_deflate()  # as ``lineup serve`` does
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    stop = asyncio.Event()
    server = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    await asyncio.sleep(1.5)
    gc.collect()
    tracemalloc.start(8)
    before = tracemalloc.take_snapshot()
    rss_before = _rss_kib(os.getpid())
    idle = Worker(
        "idle",
        {
            "url": f"http://127.0.0.1:{port}",
            "credentials": seed["idle"],
            "hold_seconds": HOLD_S + 5,
        },
        scratch,
    )
    await asyncio.to_thread(idle.wait_ready)
    await asyncio.sleep(HOLD_S)
    gc.collect()
    after = tracemalloc.take_snapshot()
    rss_after = _rss_kib(os.getpid())
    traced_kib = sum(s.size_diff for s in after.compare_to(before, "filename")) / 1024
    print(
        f"{connections} connections: RSS +{(rss_after - rss_before) / connections:.1f} KiB each,"
        f" traced +{traced_kib / connections:.1f} KiB each"
    )
    print("\nby the innermost line outside the standard library:")
    owners: dict[str, int] = {}
    for stat in after.compare_to(before, "traceback"):
        owner = _owner(stat.traceback)
        owners[owner] = owners.get(owner, 0) + stat.size_diff
    for owner, size in sorted(owners.items(), key=lambda item: -item[1])[:top]:
        print(f"{size / connections / 1024:7.2f} KiB/conn  {owner}")
    tracemalloc.stop()
    await asyncio.to_thread(idle.result)
    stop.set()
    await server
    await databases.drop(url.split("?")[0])
    await databases.close()


def _owner(traceback: tracemalloc.Traceback) -> str:
    """The line that asked for the memory: the innermost frame not in the standard library."""
    stdlib = os.path.dirname(os.__file__)
    for frame in traceback:  # innermost first
        if not frame.filename.startswith(stdlib) or "site-packages" in frame.filename:
            name = frame.filename.split("site-packages/")[-1].removeprefix(f"{ROOT}/")
            return f"{name}:{frame.lineno}"
    return f"{traceback[0].filename}:{traceback[0].lineno}"


def main() -> int:
    connections = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    _say(f"memory probe with {connections} idle connections")
    asyncio.run(probe(connections, top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
