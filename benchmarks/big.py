"""``make bench``, big workspaces: each page and list at 1,000 tasks and at 50,000, side by side.

A real hub process; ten agents grow one workspace over LAP (``benchmarks.load grower``:
each task created, running, a message, an artifact in ten, then done, failed, or waiting on
a card in fifty), to 1,000 tasks, where every page and API list is timed, then on to 50,000
(10,000 with ``--quick``), where the same requests are timed again. A good page costs what
it shows: the same at both sizes. At each size a person also creates tasks and answers
cards while three agents stream (the "people" phase of ``benchmarks.run``). Then a
reconnect storm: every idle agent of the workspace connects at once, and the hub's memory
is read before, at the peak and once they left.

Figures are p50 and p95 of ``SAMPLES`` requests one after another from one signed-in person
(the browser's session for pages, the same person's token for the API). Targets (issue
"Big workspaces"): at the big size every page and list p95 ≤ 50 ms and ≤ 1.5× its 1k
figure; search p95 ≤ 50 ms; the person's write and answer under load p95 ≤ 100 ms; a storm
of 2,000 welcomed in ≤ 3 s, memory back down after.

``python -m benchmarks.big [--quick]`` on SQLite, or on PostgreSQL when
``LINEUP_TEST_DATABASE_URL`` names a server (``make bench`` runs both).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.databases import on_a_fresh_database
from benchmarks.run import (
    BULK_AGENTS,
    PERSON_CARDS,
    Profile,
    Worker,
    cards_to_answer,
    people_phase,
    rss_kib,
    wait_for_port,
)
from benchmarks.stats import ratio, summary
from hub.testing import free_port

AGENTS = 10
# The p95 of 30 requests was the second slowest: one stall of a shared machine at one size
# and not at the other moved a page's ratio by a third. Of 100 it is the sixth slowest.
SAMPLES = 100
SMALL = 1_000
PASSWORD = "correct horse battery"
TARGET_P95_MS = 50.0
# A person's write while agents stream (issue "Big workspaces", point 4) has its own target.
PERSON_TARGET_P95_MS = 100.0
PERSON_FIGURES = (
    f"a person's POST /tasks, {BULK_AGENTS} agents streaming",
    f"a person's answer, {BULK_AGENTS} agents streaming",
)
TARGET_GROWTH = 1.5
STORM_TARGET_S = 3.0
SETTLE_S = 40.0
# Memory "back down" after the storm: at most this share of what it took still held.
MEMORY_KEPT = 0.5


def _say(message: str) -> None:
    print(f"bench big: {message}", file=sys.stderr, flush=True)


async def _seed(url: str, secret_key: str, idle_agents: int) -> dict[str, Any]:
    from hub.core.agents.pairing import create_pairing_code
    from hub.core.agents.registry import redeem_pairing_code
    from hub.core.ids import new_id
    from hub.core.log.events import append_event
    from hub.core.people.accounts import create_api_token, create_user
    from hub.core.people.credentials import hash_token, new_token
    from hub.core.store.models import Agent, AgentStatus
    from hub.testing import opened

    async with opened(url):
        user, workspace = await create_user("big@example.com", PASSWORD, "Big")
        _, token = await create_api_token(user, "bench")
        credentials, agent_ids = [], []
        for n in range(AGENTS):
            code, _ = await create_pairing_code(workspace.id, secret_key=secret_key, ttl_s=600)
            agent, credential = await redeem_pairing_code(
                code,
                name=f"grower-{n}",
                runtime="bench",
                version="1",
                capabilities=[],
                secret_key=secret_key,
            )
            credentials.append(credential)
            agent_ids.append(agent.id)
        conversation = new_id("conversation")
        await append_event(
            workspace.id,
            "conversation.created",
            {"conversationId": conversation, "title": "The long one", "agentIds": agent_ids[:1]},
            actor=f"user:{user.id}",
        )
        # Where agents stream while a person works (``benchmarks.run.people_phase``), apart from
        # the conversation whose page is timed.
        busy = new_id("conversation")
        await append_event(
            workspace.id,
            "conversation.created",
            {"conversationId": busy, "title": "The busy one", "agentIds": agent_ids},
            actor=f"user:{user.id}",
        )
        cards = await cards_to_answer(
            {"workspace": workspace.id, "agents": agent_ids}, PERSON_CARDS
        )
        # The storm's agents: fixtures, written directly rather than paired one by one.
        idle = [new_token("lu_agent") for _ in range(idle_agents)]
        await Agent.bulk_create(
            [
                Agent(
                    id=new_id("agent"),
                    workspace_id=workspace.id,
                    name=f"idle-{n}",
                    runtime="bench",
                    status=AgentStatus.OFFLINE,
                    credential_hash=hash_token(secret),
                )
                for n, secret in enumerate(idle)
            ],
            batch_size=500,
        )
    return {
        "email": user.email,
        "workspace": workspace.id,
        "token": token,
        "credentials": credentials,
        "agents": agent_ids,
        "big_conversation": conversation,
        "busy_conversation": busy,
        "cards": cards,
        "idle": idle,
    }


def _requests(seed: dict[str, Any], ids: dict[str, str]) -> list[tuple[str, str, str]]:
    """(name, kind, path) of every request timed: the pages a person opens, the lists the
    API gives, one of each kind of detail."""
    ws, long_one = seed["workspace"], seed["big_conversation"]
    page, api = f"/w/{ws}", f"/api/v1/workspaces/{ws}"
    return [
        ("inbox page", "page", f"{page}/inbox"),
        ("task list page", "page", f"{page}/tasks"),
        ("one task page", "page", f"{page}/tasks/{ids['task']}"),
        ("small conversation page", "page", f"{page}/conversations/{ids['small_conversation']}"),
        ("big conversation page", "page", f"{page}/conversations/{long_one}"),
        ("agents page", "page", f"{page}/agents"),
        ("inbox API", "api", f"{api}/inbox"),
        ("task list API", "api", f"{api}/tasks"),
        ("one task API", "api", f"{api}/tasks/{ids['task']}"),
        ("conversations API", "api", f"{api}/conversations"),
        ("big conversation messages API", "api", f"{api}/conversations/{long_one}/messages"),
        ("agents API", "api", f"{api}/agents"),
        ("search API", "search", f"{api}/search?q=migrate"),
    ]  # fmt: skip


async def _time(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], hub_pid: int
) -> dict[str, Any]:
    """p50 and p95 of ``SAMPLES`` requests, the answer's size, and the hub's CPU time per
    request: on a machine shared with other work a wall-clock figure is partly the others'
    doing, the CPU the hub spent on the request much less so."""
    latencies, sizes, statuses = [], [], set()
    cpu_before = 0.0
    for n in range(SAMPLES + 2):  # the first two warm caches up
        if n == 2:
            cpu_before = cpu_seconds(hub_pid)
        started = time.perf_counter()
        response = await http.get(path, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
        statuses.add(response.status_code)
        if n >= 2:
            latencies.append(elapsed)
            sizes.append(len(response.content))
    cpu_ms = (cpu_seconds(hub_pid) - cpu_before) * 1000 / SAMPLES
    if statuses != {200}:
        return {"status": sorted(statuses)}
    return {**summary(latencies), "kib": round(max(sizes) / 1024, 1), "cpu_ms": round(cpu_ms, 1)}


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process ``pid`` has used, its threads' included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _grow(
    url: str, seed: dict[str, Any], start: int, tasks: int, scratch: Path
) -> dict[str, Any]:
    per_agent = math.ceil(tasks / AGENTS)
    grower = Worker(
        "grower",
        {
            "url": url,
            "credentials": seed["credentials"],
            "start": start,
            "per_agent": per_agent,
            "tag": "g",
            "big_conversation": seed["big_conversation"],
        },
        scratch,
    )
    result = grower.result(timeout=3600)
    if result["errors"]:
        raise RuntimeError(f"growing the workspace was refused: {result['first_error']}")
    return {"tasks": per_agent * AGENTS, "events_per_s": result["sent"] / result["seconds"]}


async def _outbox_drained(http: httpx.AsyncClient, timeout_s: float = 1800) -> dict[str, Any]:
    """Wait until the outbox has delivered what the growth queued: a card in fifty waits for
    a person and a task in ten fails, and each is a notification (mail, here written to
    files). At 50,000 tasks the growth outruns the outbox by thousands of mails, and their
    delivery, about 7 ms of CPU each, shared the hub with the pages timed after it: that,
    not the pages, made them twice their 1,000-task figures. The pages are timed on a hub
    that has caught up, and how long the catching up took is reported beside them."""
    started = time.perf_counter()
    first: int | None = None
    lowest, moved = math.inf, started
    while time.perf_counter() - started < timeout_s:
        backlog = _pending((await http.get("/metrics")).text)
        first = backlog if first is None else first
        if backlog < lowest:
            lowest, moved = backlog, time.perf_counter()
        # Done, or stuck (mails retried later): either way nothing more comes of waiting.
        if backlog == 0 or time.perf_counter() - moved > 60:
            break
        await asyncio.sleep(2)
    return {
        "mails": first or 0,
        "left": int(lowest),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _pending(metrics: str) -> int:
    """The outbox's backlog in the hub's Prometheus text."""
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in metrics.splitlines()
        if line.startswith("lineup_outbox_notifications{") and 'status="pending"' in line
    )


async def _storm_floor(agents: int, scratch: Path) -> float:
    """The same storm on the bare echo server (``benchmarks.floor``): what the client, the
    kernel and a minimal server cost this machine with no hub in the way."""
    port = free_port()
    echo = subprocess.Popen([sys.executable, "-m", "benchmarks.floor", "serve", str(port)])
    try:
        await wait_for_port(port)
        floor = Worker(
            "storm",
            {
                "url": f"ws://127.0.0.1:{port}/",
                "credentials": [""] * agents,
                "hold_seconds": 1,
                "floor": True,
            },
            scratch,
        )
        return float(floor.result(timeout=600)["welcomed_s"])
    finally:
        echo.terminate()
        echo.wait(10)


async def _storm(
    hub_pid: int, url: str, seed: dict[str, Any], scratch: Path, floor_s: float
) -> dict[str, Any]:
    before = rss_kib(hub_pid)
    storm = Worker("storm", {"url": url, "credentials": seed["idle"], "hold_seconds": 3}, scratch)
    storm.wait_ready(timeout=600)
    peak = rss_kib(hub_pid)
    result = storm.result(timeout=600)
    # The sockets' sessions end, the agents go offline, and the hub gives memory back once
    # it sees the burst is over (hub.host.memory_return).
    await asyncio.sleep(SETTLE_S)
    after = rss_kib(hub_pid)
    return {
        "agents": len(seed["idle"]),
        "welcomed_s": result["welcomed_s"],
        "floor_s": floor_s,
        "refused": result["refused"],
        "rss_mib": {"before": before / 1024, "peak": peak / 1024, "after": after / 1024},
    }


async def measure(big: int, storm_agents: int) -> dict[str, Any]:
    return await on_a_fresh_database(lambda url, root: _measure(url, root, big, storm_agents))


async def _measure(url: str, root: Path, big: int, storm_agents: int) -> dict[str, Any]:
    from hub.testing import HubProcess

    secret_key = "bench-secret-key-" + "b" * 32
    seed = await _seed(url, secret_key, storm_agents)
    env = {
        "LINEUP_SECRET_KEY": secret_key,
        "LINEUP_HEARTBEAT_INTERVAL_S": "5",
        "LINEUP_LOG_LEVEL": "WARNING",
    }
    hub = HubProcess(url, root / "hub", **env)
    await asyncio.to_thread(hub.start)
    results: dict[str, Any] = {
        "backend": "postgres" if url.startswith("postgres") else "sqlite",
        "sizes": {},
    }
    try:
        async with httpx.AsyncClient(base_url=hub.url, timeout=60) as http:
            signed_in = await http.post(
                "/api/v1/auth/login", json={"email": seed["email"], "password": PASSWORD}
            )
            signed_in.raise_for_status()
            bearer = {"Authorization": f"Bearer {seed['token']}"}
            grown = 0
            for size in (SMALL, big):
                _say(f"{results['backend']}: growing to {size:,} tasks over LAP")
                growth = await _grow(hub.url, seed, grown // AGENTS, size - grown, root)
                grown += growth["tasks"]
                growth["outbox"] = await _outbox_drained(http)
                ids = await _sample_ids(http, seed, bearer, grown)
                _say(f"{results['backend']}: timing at {grown:,} tasks")
                figures = {}
                for name, kind, path in _requests(seed, ids):
                    figures[name] = await _time(
                        http, path, bearer if kind != "page" else {}, hub.process.pid
                    )
                figures.update(
                    await _person_under_load(results["backend"], hub.url, seed, size == big, root)
                )
                results["sizes"][str(size)] = {"growth": growth, "figures": figures}
            _say(f"{results['backend']}: a storm of {storm_agents:,} agents")
            floor_s = await _storm_floor(len(seed["idle"]), root)
            results["storm"] = await _storm(hub.process.pid, hub.url, seed, root, floor_s)
    finally:
        await asyncio.to_thread(hub.stop)
    return results


async def _person_under_load(
    backend: str, url: str, seed: dict[str, Any], second: bool, scratch: Path
) -> dict[str, Any]:
    """The "people" phase of ``make bench`` on the grown workspace: a person's ``POST
    /tasks`` and answers alone, then while agents stream messages as fast as acks allow.
    Each size answers its own half of the seeded cards."""
    half = len(seed["cards"]) // 2
    cards = seed["cards"][half:] if second else seed["cards"][:half]
    workers: list[Worker] = []
    try:
        got = await people_phase(
            backend,
            {"url": url, "conversation_id": seed["busy_conversation"]},
            {**seed, "cards": cards},
            Profile(quick=False),
            scratch,
            workers,
        )
    finally:
        for worker in workers:
            worker.stop()
    if got["person_under_load"]["errors"]:
        raise RuntimeError(f"the person was refused: {got['person_under_load']['first']}")
    writes, answers = PERSON_FIGURES
    return {
        writes: {**got["person_under_load"], "alone_p95": got["person_alone"]["p95"]},
        answers: {**got["answer_under_load"], "alone_p95": got["answer_alone"]["p95"]},
    }


async def _sample_ids(
    http: httpx.AsyncClient, seed: dict[str, Any], bearer: dict[str, str], grown: int
) -> dict[str, str]:
    """A task from the middle of the workspace's history (not one the first page shows) and
    the conversation of one of agent 1's tasks (its own, a few messages long)."""
    task_id = f"btg-1-{max(1, grown // AGENTS // 2)}"
    api = f"/api/v1/workspaces/{seed['workspace']}"
    task = (await http.get(f"{api}/tasks/{task_id}", headers=bearer)).json()
    conversation = (task.get("task") or task).get("conversationId")
    return {"task": task_id, "small_conversation": str(conversation)}


def table(runs: list[dict[str, Any]]) -> str:
    sizes = list(runs[0]["sizes"])
    head = "| figure | " + " | ".join(
        f"{run['backend']} p95 @{int(s):,} | ×@{SMALL:,}" for run in runs for s in sizes
    )
    lines = [head + " |", "|" + " --- |" * (1 + 2 * len(sizes) * len(runs))]
    for name in runs[0]["sizes"][sizes[0]]["figures"]:
        cells = []
        for run in runs:
            small = run["sizes"][sizes[0]]["figures"][name]
            for size in sizes:
                figure = run["sizes"][size]["figures"][name]
                if "p95" not in figure:
                    cells += [f"status {figure['status']}", "n/a"]
                    continue
                growth = ratio(figure["p95"], small.get("p95", math.nan))
                cpu = figure.get("cpu_ms")
                cells += [
                    f"{figure['p95']:.1f} ms"
                    + (f", {figure['kib']} KiB" if "kib" in figure else "")
                    + (f", CPU {cpu:.1f} ms" if cpu is not None else "")
                    + (f", alone {figure['alone_p95']:.1f} ms" if "alone_p95" in figure else ""),
                    f"{growth:.2f}×",
                ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(runs: list[dict[str, Any]]) -> str:
    lines = []
    for run in runs:
        big = list(run["sizes"])[-1]
        small_figures = run["sizes"][str(SMALL)]["figures"]
        missed = []
        for name, figure in run["sizes"][big]["figures"].items():
            if "p95" not in figure:
                missed.append(f"{name} (status {figure['status']})")
                continue
            growth = ratio(figure["p95"], small_figures[name].get("p95", math.nan))
            if name in PERSON_FIGURES:  # a write under load: its own target, no growth one
                if figure["p95"] > PERSON_TARGET_P95_MS:
                    missed.append(f"{name} ({figure['p95']:.0f} ms)")
                continue
            if name == "search API":  # its target is the p95 alone: a word matches more rows
                if figure["p95"] > TARGET_P95_MS:
                    missed.append(f"{name} ({figure['p95']:.0f} ms)")
                continue
            if figure["p95"] > TARGET_P95_MS or growth > TARGET_GROWTH:
                missed.append(f"{name} ({figure['p95']:.0f} ms, {growth:.1f}×)")
        cpu_growth = sorted(
            ratio(figure["cpu_ms"], small_figures[name]["cpu_ms"])
            for name, figure in run["sizes"][big]["figures"].items()
            if "cpu_ms" in figure and small_figures[name].get("cpu_ms")
        )
        storm = run["storm"]
        rss = storm["rss_mib"]
        if storm["welcomed_s"] > STORM_TARGET_S:
            missed.append(f"storm ({storm['welcomed_s']:.1f} s)")
        if rss["after"] - rss["before"] > MEMORY_KEPT * (rss["peak"] - rss["before"]):
            missed.append(f"memory after the storm ({rss['after'] - rss['before']:.0f} MiB kept)")
        outbox = run["sizes"][big]["growth"].get("outbox", {"seconds": 0, "mails": 0})
        lines.append(
            f"- {run['backend']} at {int(big):,} tasks: "
            + (f"**{len(missed)} not met**: " + "; ".join(missed) if missed else "every page met")
            + (
                f". The hub's CPU per request against {SMALL:,} tasks: {cpu_growth[0]:.2f}× to "
                f"{cpu_growth[-1]:.2f}×, median {cpu_growth[len(cpu_growth) // 2]:.2f}×"
                if cpu_growth
                else ""
            )
            + f". Outbox caught up before the timing in {outbox['seconds']:.0f} s "
            f"({outbox['mails']:,} mails waiting)"
            + f". Storm of {storm['agents']:,}: welcomed in {storm['welcomed_s']:.1f} s "
            f"(target ≤ {STORM_TARGET_S:.0f} s; {storm['floor_s']:.1f} s on the bare echo "
            f"server, {ratio(storm['welcomed_s'], storm['floor_s']):.1f}× that), memory "
            f"{rss['before']:.0f} → {rss['peak']:.0f} → {rss['after']:.0f} MiB."
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 tasks and 500 agents")
    parser.add_argument("--tasks", type=int, help="the big size, instead of 50,000")
    parser.add_argument("--storm", type=int, help="the storm's agents, instead of 2,000")
    args = parser.parse_args()
    big, storm_agents = (10_000, 500) if args.quick else (50_000, 2_000)
    big, storm_agents = args.tasks or big, args.storm or storm_agents
    run = asyncio.run(measure(big, storm_agents))
    print(table([run]))
    print(verdicts([run]))
    out = Path(__file__).with_name(f"results-big-{run['backend']}.json")
    out.write_text(json.dumps(run, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
