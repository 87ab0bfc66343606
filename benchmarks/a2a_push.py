"""The time from a remote A2A agent's change to its card in the hub: pushed, polled, streamed.

A real hub process (``LINEUP_A2A_POLL_INTERVAL_S`` at its default, 1 s) and three real
a2a-sdk remotes on loopback that differ only in how the hub learns of their changes: one
posts them to the hub's webhook (push), one offers nothing (the hub polls ``GetTask`` with
its backoff), one streams them (``SendStreamingMessage``, the floor: the change rides an
open connection). Each remote takes ``TASKS`` tasks; each task works for a while, then asks
the person a question (``input-required``). Measured per task, from just before the remote
records that change to when the person's open tab (the client socket) has the card.

How long each task works before it asks is drawn once (seeded, uniform in ``WORK_S``) and
is the same for the three remotes: a poll's delay depends on where in its backoff the
change falls, and the three are measured over the same moments. Tasks start a fraction of
a second apart, so several are followed at once, as on a busy hub.

``python -m benchmarks.a2a_push`` on SQLite, or on PostgreSQL when
``LINEUP_TEST_DATABASE_URL`` names a server (``make bench`` runs both).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import httpx
import websockets
from a2a.server.agent_execution import RequestContext
from a2a.server.tasks import TaskUpdater

from benchmarks.databases import on_a_fresh_database
from benchmarks.stats import ratio, summary
from hub.core.people.accounts import create_api_token, create_user
from hub.testing import HubProcess, eventually, opened
from tests.plugins.a2a.peers import Base, say, serve_remote

TASKS = 30
WORK_S = (0.5, 10.0)
START_EVERY_S = 0.25
MODES = ("push", "poll", "stream")


class AsksLater(Base):
    """Works for the task's drawn time, then asks which colour; notes when it changed."""

    def __init__(self, work_s: dict[str, float]) -> None:
        super().__init__()
        self.work_s = work_s
        self.changed_at: dict[str, float] = {}

    async def work(self, context: RequestContext, updater: TaskUpdater) -> None:
        title = context.get_user_input()
        await updater.start_work(say(updater, "Looking at it."))
        await asyncio.sleep(self.work_s[title])
        self.changed_at[title] = time.perf_counter()
        await updater.requires_input(say(updater, "Which colour should the button be?"))


async def measure() -> dict[str, Any]:
    return await on_a_fresh_database(_measure)


async def _measure(url: str, root: Path) -> dict[str, Any]:
    async with opened(url):
        user, workspace = await create_user("bench@example.com", "correct horse", "Bench")
        _, token = await create_api_token(user, "bench")
    draw = random.Random(20261206)
    titles = [f"Paint button {n}" for n in range(TASKS)]
    work_s = {title: draw.uniform(*WORK_S) for title in titles}
    hub = HubProcess(
        url, root / "hub", LINEUP_A2A_ENABLED="true", LINEUP_OUTBOUND_ALLOW_PRIVATE="true"
    )
    await asyncio.to_thread(hub.start)
    result: dict[str, Any] = {"backend": "postgres" if url.startswith("postgres") else "sqlite"}
    try:
        headers = {"Authorization": f"Bearer {token}"}
        api = httpx.AsyncClient(
            base_url=f"{hub.url}/api/v1/workspaces/{workspace.id}", headers=headers, timeout=30
        )
        address = hub.url.replace("http://", "ws://")
        async with api:
            for mode in MODES:
                socket_url = f"{address}/ws/client?workspace={workspace.id}&after=0"
                async with websockets.connect(socket_url, additional_headers=headers) as tab:
                    samples, reads = await _one_mode(mode, api, tab, titles, work_s)
                result[mode] = {"card_ms": summary(samples), "get_task_calls": reads}
    finally:
        await asyncio.to_thread(hub.stop)
    polled, pushed = result["poll"]["card_ms"], result["push"]["card_ms"]
    result["poll_over_push_p50"] = round(ratio(polled["p50"], pushed["p50"]), 1)
    result["push_over_stream_p50"] = round(
        ratio(pushed["p50"], result["stream"]["card_ms"]["p50"]), 2
    )
    return result


async def _one_mode(
    mode: str, api: httpx.AsyncClient, tab: Any, titles: list[str], work_s: dict[str, float]
) -> tuple[list[float], int]:
    executor = AsksLater(work_s)
    async with serve_remote(
        executor, streaming=mode == "stream", push=mode == "push", name=f"Painter ({mode})"
    ) as remote:
        added = await api.post("/remote-agents", json={"url": remote.url})
        added.raise_for_status()
        agent_id = added.json()["id"]
        carded: dict[str, float] = {}  # hub task id → when its card reached the tab

        async def read_the_tab() -> None:
            while True:
                frame = json.loads(await tab.recv())
                if frame.get("type") == "interaction.requested":
                    task_id = frame.get("taskId") or (frame.get("payload") or {}).get("taskId")
                    carded.setdefault(str(task_id), time.perf_counter())

        reading = asyncio.create_task(read_the_tab())  # from before the first task starts
        tasks: dict[str, str] = {}  # hub task id → title
        try:
            for title in titles:
                created = await api.post("/tasks", json={"title": title, "targetAgentId": agent_id})
                created.raise_for_status()
                tasks[created.json()["id"]] = title
                await asyncio.sleep(START_EVERY_S)
            await eventually(lambda: set(tasks) <= set(carded), within=120, every=0.05)
        finally:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)
        samples = [(carded[i] - executor.changed_at[t]) * 1000 for i, t in tasks.items()]
        modes = {(await api.get(f"/tasks/{i}")).json()["remote"]["updates"] for i in tasks}
        expected = {"push": "push", "poll": "poll", "stream": "stream"}[mode]
        assert modes == {expected}, f"{mode}: the tasks were followed by {modes}"
        return samples, remote.methods.count("GetTask")


def main() -> int:
    result = asyncio.run(measure())
    line = "; ".join(
        f"{mode} p50 {result[mode]['card_ms']['p50']:.1f} ms p95 "
        f"{result[mode]['card_ms']['p95']:.1f} ms ({result[mode]['get_task_calls']} GetTask)"
        for mode in MODES
    )
    print(
        f"a2a ({result['backend']}): from a remote's change to its card: {line}; "
        f"polled/pushed p50 {result['poll_over_push_p50']}x, "
        f"pushed/streamed p50 {result['push_over_stream_p50']}x"
    )
    out = Path(__file__).with_name(f"results-a2a-push-{result['backend']}.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
