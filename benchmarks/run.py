"""``make bench``: the hub's speed and memory beside the floor of this machine, one run.

Each backend is measured in a process of its own (Tortoise keeps one backend per process):
``python -m benchmarks.run`` runs SQLite, then PostgreSQL when ``LINEUP_TEST_DATABASE_URL``
names a server (``make bench`` starts one with fsync on), prints the table and writes JSON.

The hub runs as ``lineup serve`` in its own process; every client runs in other processes
(``benchmarks.load``). Figures are medians and percentiles of many samples; ratios divide
each figure by its floor measured minutes earlier on the same machine.

``--only PHASE`` (repeatable) runs just those phases, to chase one figure without the
half hour of the others; the table shows the rest as n/a.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.floor import (
    commit_floor,
    echo_round_trips,
    paced_commit_floor,
    paced_echo_round_trips,
)
from benchmarks.stats import ratio, summary

ROOT = Path(__file__).resolve().parents[1]
INGEST_AGENTS = (1, 10, 100)
LATENCY_RATES = (50, 500)
PHASES = ("latency", "ingest", "people", "fanout", "idle")
# Agents streaming at full speed while a person creates tasks (the "people" phase).
BULK_AGENTS = 3
# Cards for the person to answer, half alone and half under load: more than either needs.
PERSON_CARDS = 400
TARGETS = {
    "latency_50_p95_ms": "≤ 10 ms and ≤ 5× floor",
    "ingest_100_per_s": "≥ 3,000/s",
    "person_under_load_p95_ms": "≤ 100 ms",
    "fanout_p95_ms": "≤ 250 ms",
    "idle_kib_per_connection": "≤ 64 KiB",
}


class Profile:
    def __init__(self, quick: bool) -> None:
        self.seconds = 4 if quick else 10
        self.ingest_seconds = 4 if quick else 8
        self.paced_floor_seconds = 2 if quick else 6
        self.fanout_clients = 200 if quick else 1000
        self.idle_agents = 500 if quick else 5000
        self.fanout_events = 20


def _say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Worker:
    """One ``benchmarks.load`` process."""

    def __init__(self, role: str, arguments: dict[str, Any], scratch: Path) -> None:
        handle, path = tempfile.mkstemp(suffix=".json", dir=scratch)
        with os.fdopen(handle, "w") as file:
            json.dump(arguments, file)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.load", role, path],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )

    def wait_ready(self, timeout: float = 300) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.strip() == "ready":
                return
            if not line and self.process.poll() is not None:
                raise RuntimeError("load worker exited before it was ready")
        raise RuntimeError("load worker not ready in time")

    def result(self, timeout: float = 300) -> dict[str, Any]:
        out, _ = self.process.communicate(timeout=timeout)
        return dict(json.loads(out.strip().splitlines()[-1]))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


async def _seed(url: str, profile: Profile, secret_key: str) -> dict[str, Any]:
    from hub.core.agents.pairing import create_pairing_code
    from hub.core.agents.registry import redeem_pairing_code
    from hub.core.ids import new_id
    from hub.core.log.events import append_event
    from hub.core.people.accounts import create_api_token, create_user
    from hub.core.people.credentials import hash_token, new_token
    from hub.core.store.models import Agent, AgentStatus
    from hub.testing import opened

    async def workspace_with_agents(email: str, agents: int) -> dict[str, Any]:
        user, workspace = await create_user(email, "correct horse", "Bench")
        _, token = await create_api_token(user, "bench")
        credentials, agent_ids = [], []
        for n in range(agents):
            code, _ = await create_pairing_code(workspace.id, secret_key=secret_key, ttl_s=600)
            agent, credential = await redeem_pairing_code(
                code,
                name=f"bench-{n}",
                runtime="bench",
                version="1",
                capabilities=[],
                secret_key=secret_key,
            )
            credentials.append(credential)
            agent_ids.append(agent.id)
        # The agents write in it: an agent may only write where it belongs.
        conversation_id = new_id("conversation")
        await append_event(
            workspace.id,
            "conversation.created",
            {"conversationId": conversation_id, "title": "bench", "agentIds": agent_ids},
            actor=f"user:{user.id}",
        )
        return {
            "workspace": workspace.id,
            "token": token,
            "conversation": conversation_id,
            "credentials": credentials,
            "agents": agent_ids,
        }

    async with opened(url):
        seed = await workspace_with_agents("bench@example.com", max(INGEST_AGENTS))
        # The fan-out's own workspace: what earlier phases leave behind (their agents
        # going offline together, 100 events for each of 1,000 clients) is not its subject.
        seed["fanout"] = await workspace_with_agents("fanout@example.com", 1)
        workspace_id = seed["workspace"]
        seed["cards"] = await cards_to_answer(seed, PERSON_CARDS)
        # Idle agents are fixtures, not the subject: written directly, not paired one by one.
        idle = [new_token("lu_agent") for _ in range(profile.idle_agents)]
        await Agent.bulk_create(
            [
                Agent(
                    id=new_id("agent"),
                    workspace_id=workspace_id,
                    name=f"idle-{n}",
                    runtime="bench",
                    status=AgentStatus.OFFLINE,
                    credential_hash=hash_token(secret),
                )
                for n, secret in enumerate(idle)
            ],
            batch_size=500,
        )
    return {**seed, "idle": idle}


async def cards_to_answer(seed: dict[str, Any], count: int) -> list[str]:
    """Low-risk approvals the first agent asks on a task of its own, for the person to answer."""
    from hub.core.ids import new_id
    from hub.core.log.events import append_event

    workspace_id, agent = seed["workspace"], seed["agents"][0]
    task_id = new_id("task")
    await append_event(
        workspace_id,
        "task.created",
        {"taskId": task_id, "title": "cards", "targetAgentId": agent},
        actor=f"agent:{agent}",
    )
    await append_event(workspace_id, "task.accepted", {"taskId": task_id}, actor=f"agent:{agent}")
    cards = [new_id("interaction") for _ in range(count)]
    for card in cards:
        await append_event(
            workspace_id,
            "interaction.requested",
            {"interaction": {"id": card, "type": "approval", "title": "Go on?", "risk": "low"}},
            actor=f"agent:{agent}",
            task_id=task_id,
        )
    return cards


async def wait_for_port(port: int) -> None:
    """Until a server accepts on ``port``: a loaded machine starts it slower than a guess."""
    async with asyncio.timeout(60):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            return


async def _last_sequence(url: str, workspace_id: str) -> int:
    from hub.core.log.events import last_sequence
    from hub.testing import opened

    async with opened(url):
        return await last_sequence(workspace_id)


async def measure(
    backend: str, profile: Profile, phases: tuple[str, ...] = PHASES
) -> dict[str, Any]:
    from hub.testing import HubProcess, TestDatabases, free_port

    secret_key = "bench-secret-key-" + "b" * 32
    scratch = Path(tempfile.mkdtemp(prefix="lineup-bench-"))
    postgres = os.environ.get("LINEUP_TEST_DATABASE_URL") if backend == "postgres" else None
    databases = TestDatabases(scratch, postgres)
    url = await databases.create()
    if postgres:
        url += "?minsize=5&maxsize=40"
    os.environ["LINEUP_SECRET_KEY"] = secret_key
    seed = await _seed(url, profile, secret_key)
    results: dict[str, Any] = {"backend": backend}
    if postgres:
        results["postgres"] = await _postgres_settings(url)
    else:
        results["sqlite"] = await _sqlite_settings(url)

    echo_port = free_port()
    echo = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.floor", "serve", str(echo_port)], cwd=ROOT
    )
    hub = HubProcess(
        url,
        scratch / "hub",
        LINEUP_SECRET_KEY=secret_key,
        LINEUP_HEARTBEAT_INTERVAL_S="5",
        LINEUP_LOG_LEVEL="WARNING",
    )
    workers: list[Worker] = []
    try:
        await wait_for_port(echo_port)
        echo_url = f"ws://127.0.0.1:{echo_port}/"
        if "latency" in phases or "ingest" in phases:
            _say(f"{backend}: floor")
            results["floor_echo_ms"] = await echo_round_trips(echo_url)
            results["floor_commit"] = {
                str(n): await commit_floor(url, n, profile.ingest_seconds / 2)
                for n in INGEST_AGENTS
            }
        if "latency" in phases:
            seconds = profile.paced_floor_seconds
            results["floor_paced"] = {
                str(rate): {
                    "echo_ms": await paced_echo_round_trips(echo_url, rate, seconds),
                    "commit_ms": await paced_commit_floor(url, rate, seconds),
                }
                for rate in LATENCY_RATES
            }
        hub.start()
        base = {"url": hub.url, "conversation_id": seed["conversation"]}

        for rate in LATENCY_RATES if "latency" in phases else ():
            _say(f"{backend}: latency at {rate}/s")
            after = await _last_sequence(url, seed["workspace"])
            expected = rate * profile.seconds
            reader = Worker(
                "reader",
                {
                    "url": hub.url,
                    "token": seed["token"],
                    "workspace": seed["workspace"],
                    "after": after,
                    "tag": f"lat{rate}",
                    "expect": expected,
                },
                scratch,
            )
            workers.append(reader)
            reader.wait_ready()
            sender = Worker(
                "sender",
                {
                    **base,
                    "credentials": seed["credentials"][:1],
                    "tag": f"lat{rate}",
                    "rate": rate,
                    "seconds": profile.seconds,
                },
                scratch,
            )
            workers.append(sender)
            sent = sender.result()
            got = reader.result()
            results[f"latency_{rate}"] = {
                **summary(got["latencies"]),
                "sent": sent["sent"],
                "errors": sent["errors"],
            }

        for agents in INGEST_AGENTS if "ingest" in phases else ():
            _say(f"{backend}: ingest with {agents} agents")
            sender = Worker(
                "sender",
                {
                    **base,
                    "credentials": seed["credentials"][:agents],
                    "tag": f"ingest{agents}",
                    "window": 8,
                    "seconds": profile.ingest_seconds,
                },
                scratch,
            )
            workers.append(sender)
            done = sender.result()
            results[f"ingest_{agents}"] = {
                "per_s": done["acked"] / done["seconds"],
                "errors": done["errors"],
            }

        if "people" in phases:
            results.update(await people_phase(backend, base, seed, profile, scratch, workers))

        if "fanout" in phases:
            _say(f"{backend}: fan-out to {profile.fanout_clients} clients")
            results["fanout"] = await _fanout(
                hub.url, echo_url, seed, url, profile, scratch, workers
            )
        if "idle" in phases:
            _say(f"{backend}: {profile.idle_agents} idle agent connections")
            results.update(await _idle(hub, echo, echo_url, seed, scratch, workers))
    finally:
        for worker in workers:
            worker.stop()
        hub.stop()
        echo.kill()
        echo.wait()
        await databases.drop(url.split("?")[0])
        await databases.close()
    return results


async def people_phase(
    backend: str,
    base: dict[str, Any],
    seed: dict[str, Any],
    profile: Profile,
    scratch: Path,
    workers: list[Worker],
) -> dict[str, Any]:
    """A person's ``POST /tasks`` alone, then while agents stream at full speed: the
    second must not be a queue behind the agents' batches."""
    results: dict[str, Any] = {}
    person = {
        "url": base["url"],
        "token": seed["token"],
        "workspace": seed["workspace"],
        "target": seed["agents"][0],
        "seconds": profile.seconds,
    }
    _say(f"{backend}: a person alone")
    half = len(seed["cards"]) // 2
    alone = Worker("person", {**person, "tag": "alone", "cards": seed["cards"][:half]}, scratch)
    workers.append(alone)
    got = alone.result()
    results["person_alone"] = {
        **summary(got["writes"]),
        "errors": got["errors"],
        "first": got["first"],
    }
    results["answer_alone"] = summary(got["answers"])
    _say(f"{backend}: a person while {BULK_AGENTS} agents stream")
    streaming = Worker(
        "sender",
        {
            **base,
            "credentials": seed["credentials"][:BULK_AGENTS],
            "tag": "bulk",
            "window": 8,
            "seconds": profile.seconds + 2,
        },
        scratch,
    )
    workers.append(streaming)
    await asyncio.sleep(1)  # the agents are streaming before the person starts
    loaded = Worker("person", {**person, "tag": "loaded", "cards": seed["cards"][half:]}, scratch)
    workers.append(loaded)
    got = loaded.result()
    bulk = streaming.result()
    results["person_under_load"] = {
        **summary(got["writes"]),
        "errors": got["errors"],
        "agents_per_s": bulk["acked"] / bulk["seconds"],
    }
    results["answer_under_load"] = summary(got["answers"])
    results["bulk"] = bulk
    return results


async def _idle(
    hub: Any,
    echo: subprocess.Popen[bytes],
    echo_url: str,
    seed: dict[str, Any],
    scratch: Path,
    workers: list[Worker],
) -> dict[str, float]:
    """Memory per idle agent connection, the hub's and the bare echo server's."""
    before = rss_kib(hub.process.pid)  # type: ignore[union-attr]
    per_process = 1000
    idle_workers = [
        Worker(
            "idle",
            {
                "url": hub.url,
                "credentials": seed["idle"][i : i + per_process],
                "hold_seconds": 15,
            },
            scratch,
        )
        for i in range(0, len(seed["idle"]), per_process)
    ]
    workers.extend(idle_workers)
    for worker in idle_workers:
        worker.wait_ready()
    await asyncio.sleep(11)  # two heartbeats each
    after_rss = rss_kib(hub.process.pid)  # type: ignore[union-attr]
    results = {"idle_kib_per_connection": (after_rss - before) / len(seed["idle"])}
    for worker in idle_workers:
        worker.result()

    echo_before = rss_kib(echo.pid)
    floor_idle = [
        Worker("idle_floor", {"url": echo_url, "sockets": per_process, "hold_seconds": 8}, scratch)
        for _ in range(0, len(seed["idle"]), per_process)
    ]
    workers.extend(floor_idle)
    for worker in floor_idle:
        worker.wait_ready()
    await asyncio.sleep(2)
    results["floor_idle_kib_per_connection"] = (rss_kib(echo.pid) - echo_before) / len(seed["idle"])
    for worker in floor_idle:
        worker.result()
    return results


async def _fanout(
    hub_url: str,
    echo_url: str,
    seed: dict[str, Any],
    url: str,
    profile: Profile,
    scratch: Path,
    workers: list[Worker],
) -> dict[str, Any]:
    processes = 4
    per_process = profile.fanout_clients // processes
    events = profile.fanout_events
    own = seed["fanout"]
    after = await _last_sequence(url, own["workspace"])
    readers = [
        Worker(
            "reader",
            {
                "url": hub_url,
                "token": own["token"],
                "workspace": own["workspace"],
                "after": after,
                "tag": "fan",
                "expect": events,
                "sockets": per_process,
            },
            scratch,
        )
        for _ in range(processes)
    ]
    workers.extend(readers)
    for reader in readers:
        reader.wait_ready()
    sender = Worker(
        "sender",
        {
            "url": hub_url,
            "conversation_id": own["conversation"],
            "credentials": own["credentials"],
            "tag": "fan",
            "rate": 4,
            "seconds": events / 4,
        },
        scratch,
    )
    workers.append(sender)
    sender.result()
    last = _merge_last([r.result() for r in readers])

    floor_readers = [
        Worker("fanout_floor", {"url": echo_url, "sockets": per_process, "expect": events}, scratch)
        for _ in range(processes)
    ]
    workers.extend(floor_readers)
    for reader in floor_readers:
        reader.wait_ready()
    import websockets

    async with websockets.connect(echo_url) as socket:
        for _ in range(events):
            await socket.send(f"broadcast:{time.monotonic_ns()}")
            await asyncio.sleep(0.25)
    floor = _merge_last([r.result() for r in floor_readers])
    return {
        "clients": per_process * processes,
        "to_last": summary(last),
        "floor_to_last": summary(floor),
    }


def _merge_last(results: list[dict[str, Any]]) -> list[float]:
    merged: dict[str, float] = {}
    for result in results:
        for stamp, latency in result["last"].items():
            merged[stamp] = max(merged.get(stamp, 0.0), latency)
    return list(merged.values())


def _times(factor: float) -> str:
    """A ratio to the floor; ingest runs far below its floor, so small ones keep digits."""
    return f"{factor:,.1f}" if factor >= 1 else f"{factor:.3f}"


def _floor_latency(run: dict[str, Any], key: str, rate: int) -> float:
    """An uplink's floor at ``rate`` events/s: one echo round trip through hypercorn plus
    one durable commit, each at that rate (see ``benchmarks.floor``)."""
    paced = run["floor_paced"][str(rate)]
    return float(paced["echo_ms"][key] + paced["commit_ms"][key])


def _floor_back_to_back(run: dict[str, Any], key: str) -> float:
    """The same, with the machine kept busy: round trips and commits one after another."""
    return float(run["floor_echo_ms"][key] + run["floor_commit"]["1"][key])


def table(runs: list[dict[str, Any]]) -> str:
    header = "| figure | " + " | ".join(f"{r['backend']} | ×floor" for r in runs) + " | target |"
    lines = [header, "|" + " --- |" * (2 + 2 * len(runs))]

    def row(name: str, target: str, pick: Any) -> None:
        cells = []
        for run in runs:
            try:
                value, floor = pick(run)
            except KeyError:  # a phase left out with --only
                value = floor = math.nan
            cells.append(
                f"{value:,.2f} | {_times(ratio(value, floor))}"
                if not math.isnan(value)
                else "n/a | n/a"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {target} |")

    for rate in LATENCY_RATES:
        for key in ("p50", "p95", "p99"):
            row(
                f"uplink→client {key} ms @{rate}/s",
                TARGETS["latency_50_p95_ms"] if (rate, key) == (50, "p95") else "",
                lambda r, k=key, q=rate: (r[f"latency_{q}"][k], _floor_latency(r, k, q)),
            )
    for agents in INGEST_AGENTS:
        row(
            f"durable ingest events/s, {agents} agents",
            TARGETS["ingest_100_per_s"] if agents == 100 else "",
            lambda r, a=agents: (r[f"ingest_{a}"]["per_s"], r["floor_commit"][str(a)]["per_s"]),
        )
    for key in ("p50", "p95"):
        row(
            f"person's POST /tasks {key} ms, {BULK_AGENTS} agents streaming (floor: alone)",
            TARGETS["person_under_load_p95_ms"] if key == "p95" else "",
            lambda r, k=key: (r["person_under_load"][k], r["person_alone"][k]),
        )
        row(
            f"person's answer {key} ms, {BULK_AGENTS} agents streaming (floor: alone)",
            TARGETS["person_under_load_p95_ms"] if key == "p95" else "",
            lambda r, k=key: (r["answer_under_load"][k], r["answer_alone"][k]),
        )
    for key in ("p50", "p95"):
        row(
            f"fan-out to last client {key} ms",
            TARGETS["fanout_p95_ms"] if key == "p95" else "",
            lambda r, k=key: (r["fanout"]["to_last"][k], r["fanout"]["floor_to_last"][k]),
        )
    row(
        "KiB per idle agent connection",
        TARGETS["idle_kib_per_connection"],
        lambda r: (r["idle_kib_per_connection"], r["floor_idle_kib_per_connection"]),
    )
    return "\n".join(lines)


TARGET_CHECKS = {
    "latency_50_p95_ms": lambda r: (
        r["latency_50"]["p95"] <= 10
        and ratio(r["latency_50"]["p95"], _floor_latency(r, "p95", 50)) <= 5
    ),
    "ingest_100_per_s": lambda r: r["ingest_100"]["per_s"] >= 3000,
    "person_under_load_p95_ms": lambda r: (
        r["person_under_load"]["p95"] <= 100 and r["answer_under_load"]["p95"] <= 100
    ),
    "fanout_p95_ms": lambda r: r["fanout"]["to_last"]["p95"] <= 250,
    "idle_kib_per_connection": lambda r: r["idle_kib_per_connection"] <= 64,
}
TARGET_NAMES = {
    "latency_50_p95_ms": "uplink→client p95 at 50 events/s",
    "ingest_100_per_s": "durable ingest with 100 agents",
    "person_under_load_p95_ms": "a person's task and answer while agents stream, p95",
    "fanout_p95_ms": "fan-out to the last client, p95",
    "idle_kib_per_connection": "memory per idle agent connection",
}


def verdicts(runs: list[dict[str, Any]]) -> str:
    """One line per target of issue 9: met or not, per backend."""
    lines = []
    for key, check in TARGET_CHECKS.items():
        cells = []
        for run in runs:
            try:
                verdict = "met" if check(run) else "**not met**"
            except KeyError:  # a phase left out with --only
                verdict = "not measured"
            except TypeError:
                verdict = "**not met**"
            cells.append(f"{run['backend']} {verdict}")
        lines.append(f"- {TARGET_NAMES[key]} ({TARGETS[key]}): " + ", ".join(cells))
    return "\n".join(lines)


def back_to_back(runs: list[dict[str, Any]]) -> str:
    """The latency target's figure beside the uplink floor taken back to back: the table
    divides by the floor taken at the figure's own rate, and both are worth seeing."""
    cells = []
    for run in runs:
        try:
            figure, floor = run["latency_50"]["p95"], _floor_back_to_back(run, "p95")
        except KeyError:  # a phase left out with --only
            continue
        cells.append(
            f"{floor:.2f} ms on {run['backend']} (the p95 at 50/s is "
            f"{_times(ratio(figure, floor))}× that)"
        )
    if not cells:
        return ""
    return "Taken back to back, the machine kept busy, the uplink floor at p95 is " + (
        " and ".join(cells) + "."
    )


def machine_lines(machine: dict[str, Any]) -> str:
    keys = (
        "when",
        "cpu",
        "cpus",
        "ram",
        "python",
        "platform",
        "sqlite",
        "postgres",
        "profile",
        "took",
    )
    return "\n".join(f"- {key}: {machine[key]}" for key in keys if machine.get(key))


def report(results: dict[str, Any]) -> str:
    """The markdown that ``benchmarks/RESULTS.md`` holds: machine, table, targets."""
    return "\n\n".join(
        part
        for part in [
            machine_lines(results["machine"]),
            table(results["runs"]),
            back_to_back(results["runs"]),
            verdicts(results["runs"]),
        ]
        if part
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="a smaller, faster profile")
    parser.add_argument(
        "--only",
        action="append",
        choices=PHASES,
        help="run just this phase (repeatable); the others show as n/a",
    )
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results.json")
    parser.add_argument(
        "--report",
        type=Path,
        metavar="JSON",
        help="print the markdown report of a saved run (for benchmarks/RESULTS.md) and exit",
    )
    args = parser.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())))
        return 0
    phases = tuple(args.only) if args.only else PHASES
    if args.backend != "both":
        result = asyncio.run(measure(args.backend, Profile(args.quick), phases))
        args.json.write_text(json.dumps(result, indent=2))
        return 0
    backends = ["sqlite"] + (["postgres"] if os.environ.get("LINEUP_TEST_DATABASE_URL") else [])
    runs = []
    started = time.monotonic()
    for backend in backends:
        out = args.json.with_name(f"results-{backend}.json")
        command = [
            sys.executable,
            "-m",
            "benchmarks.run",
            "--backend",
            backend,
            "--json",
            str(out),
        ] + (["--quick"] if args.quick else [])
        command += [f"--only={phase}" for phase in args.only or ()]
        subprocess.run(command, cwd=ROOT, check=True)
        runs.append(json.loads(out.read_text()))
        out.unlink()
        # Written after each backend, so a later failure keeps what was measured.
        results = {"machine": _machine(args.quick, args.only, runs), "runs": runs}
        results["machine"]["took"] = _minutes(time.monotonic() - started)
        args.json.write_text(json.dumps(results, indent=2))
    print(report(results))
    print(f"\nwritten to {args.json}; reprint with: python -m benchmarks.run --report {args.json}")
    return 0


def _minutes(seconds: float) -> str:
    """How long the run took, e.g. "8 min 12 s" (the full profile should stay within 10)."""
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _machine(quick: bool, only: list[str] | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    import platform

    profile = "quick (--quick)" if quick else "full"
    if only:
        profile += ", only " + ", ".join(only)

    return {
        "cpus": os.cpu_count(),
        "cpu": _proc_field("/proc/cpuinfo", "model name"),
        "ram": _proc_field("/proc/meminfo", "MemTotal"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": next((r["sqlite"] for r in runs if r.get("sqlite")), None),
        "postgres": next((r["postgres"] for r in runs if r.get("postgres")), None),
        "profile": profile,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _proc_field(path: str, name: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    except OSError:
        pass
    return None


async def _sqlite_settings(url: str) -> str:
    """The pragmas that make a commit durable, read back through the hub's own connection."""
    from tortoise import connections

    from hub.testing import opened

    names = {"journal_mode": None, "synchronous": ("OFF", "NORMAL", "FULL", "EXTRA")}
    values = []
    async with opened(url):
        for name, spelled in names.items():
            rows = await connections.get("default").execute_query_dict(f"PRAGMA {name}")
            value = rows[0][name]
            values.append(f"{name}={spelled[value] if spelled else value}")
    return "SQLite " + ", ".join(values)


async def _postgres_settings(url: str) -> str:
    """The server's version and the settings that make a commit durable."""
    import asyncpg

    dsn = url.replace("postgres://", "postgresql://", 1).split("?")[0]
    connection = await asyncpg.connect(dsn)
    try:
        values = [
            f"{name}={await connection.fetchval(f'SHOW {name}')}"
            for name in ("server_version", "fsync", "synchronous_commit", "wal_sync_method")
        ]
    finally:
        await connection.close()
    return "PostgreSQL " + ", ".join(values)


if __name__ == "__main__":
    raise SystemExit(main())
