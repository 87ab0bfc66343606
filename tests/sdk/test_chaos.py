"""Chaos: many SDK agents, a real hub, and sockets cut at random, at least 100 times.

Twenty Python agents and five TypeScript ones (``sdk/typescript``, in a node process of
their own) connect through ``ChaosProxy`` while a person (the JSON API, straight to the
hub) keeps giving them tasks and messages. Each agent works its tasks (accept, progress, a
child task, finish) and answers every message with a message of its own, all while the
proxy keeps cutting connections. Afterwards the log must hold every uplink exactly once
(one of each step per task, one answer per message) and each agent must have handled
every event addressed to it exactly once and in sequence order.

``make test`` runs a short profile; ``LINEUP_CHAOS_SECONDS=120`` runs the two-minute one.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.models import Event, Task
from hub.sdk import Agent, Backoff, Downlink
from hub.sdk import Task as AgentTask
from tests.sdk.chaos_proxy import ChaosProxy
from tests.sdk.live import LiveHub, live_hub, stacks_of
from tests.sdk.typescript.chaos_agents import RemoteAgent, TypeScriptAgents

AGENTS = 20
TYPESCRIPT_AGENTS = 5
MINIMUM_KILLS = 100
CHAOS_SECONDS = float(os.environ.get("LINEUP_CHAOS_SECONDS", "15"))
DRAIN_SECONDS = 60.0

pytestmark = pytest.mark.timeout(CHAOS_SECONDS + DRAIN_SECONDS + 120)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


class Worker:
    """One SDK agent and what it saw."""

    def __init__(self, agent: Agent, conversation_id: str) -> None:
        self.agent = agent
        self.conversation_id = conversation_id
        self.task_starts: Counter[str] = Counter()
        self.messages_seen: list[int] = []
        agent.on_task(self.work)
        agent.on("message.delivered")(self.answer)

    # What the checks read, as a TypeScript agent's ``RemoteAgent`` reports it too.
    @property
    def agent_id(self) -> str | None:
        return self.agent.agent_id

    @property
    def connected(self) -> bool:
        return self.agent.connected

    @property
    def pending_uplinks(self) -> int:
        return self.agent.pending_uplinks

    @property
    def connects(self) -> int:
        return self.agent.connects

    @property
    def duplicates_dropped(self) -> int:
        return self.agent.duplicates_dropped

    async def work(self, task: AgentTask) -> None:
        self.task_starts[task.id] += 1
        await task.accept()
        await task.progress(50, "half way")
        child = await task.create_child("the part", status="running")
        await child.succeed()
        await task.succeed("done")

    async def answer(self, event: Downlink) -> None:
        assert event.sequence is not None
        self.messages_seen.append(event.sequence)
        message = event.payload["message"]
        await self.agent.post_message(self.conversation_id, f"echo {message['id']}")


async def test_agents_lose_nothing_and_repeat_nothing_while_sockets_are_cut(
    hub: LiveHub, tmp_path: Path
) -> None:
    rng = random.Random(20261129)
    async with ChaosProxy(hub.process.port, rng) as proxy:
        workers: list[Worker | RemoteAgent] = []
        for n in range(AGENTS):
            agent = Agent(
                proxy.url,
                pairing_code=await hub.pairing_code(),
                name=f"chaos-{n}",
                state_dir=tmp_path / "agents" / str(n),
                backoff=Backoff(initial_s=0.02, maximum_s=0.3),
            )
            await agent.start()
            assert agent.agent_id is not None
            workers.append(Worker(agent, await hub.conversation(agent.agent_id, f"chaos {n}")))
        codes = [await hub.pairing_code() for _ in range(TYPESCRIPT_AGENTS)]
        typescript = TypeScriptAgents(proxy.url, codes, tmp_path / "typescript-agents")
        try:
            for n, remote in enumerate(await typescript.start()):
                remote.conversation_id = await hub.conversation(remote.agent_id, f"chaos ts {n}")
                workers.append(remote)
            await _chaos(hub, proxy, workers, rng)
            await _drained(hub, workers, typescript)
        finally:
            for worker in workers:
                if isinstance(worker, Worker):
                    await worker.agent.close()
            await typescript.close()
    assert proxy.kills >= MINIMUM_KILLS, proxy.kills
    await _check_log(hub, workers, proxy.kills)


async def _chaos(
    hub: LiveHub, proxy: ChaosProxy, workers: list[Worker | RemoteAgent], rng: random.Random
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CHAOS_SECONDS
    kill_every_s = CHAOS_SECONDS / (MINIMUM_KILLS * 1.3)

    async def person() -> None:
        n = 0
        while loop.time() < deadline:
            worker = rng.choice(workers)
            agent_id = worker.agent_id
            assert agent_id is not None
            if rng.random() < 0.5:
                await hub.task(agent_id, f"task {n}", worker.conversation_id)
            else:
                await hub.api(
                    "POST",
                    f"/conversations/{worker.conversation_id}/messages",
                    {"content": f"message {n}", "targetAgentId": agent_id},
                )
            n += 1
            await asyncio.sleep(rng.uniform(0, 0.06))

    async def killer() -> None:
        while loop.time() < deadline or proxy.kills < MINIMUM_KILLS:
            proxy.kill_one()
            await asyncio.sleep(rng.uniform(0, 2 * kill_every_s))

    await asyncio.gather(person(), killer())


async def _drained(
    hub: LiveHub, workers: list[Worker | RemoteAgent], typescript: TypeScriptAgents
) -> None:
    """Wait (bounded) until every task ended and every message was handled and answered."""

    async def settled() -> bool:
        if await Task.filter(workspace_id=hub.workspace_id).exclude(status="succeeded").exists():
            return False
        await typescript.refresh()
        for worker in workers:
            delivered = await Event.filter(
                workspace_id=hub.workspace_id,
                type="message.created",
                recipient_agent_id=worker.agent_id,
            ).count()
            if len(worker.messages_seen) != delivered or worker.pending_uplinks:
                return False
        return True

    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            while not await settled():  # noqa: ASYNC110 - the state is in the database
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(await _why_not_drained(hub, workers)) from None


async def _why_not_drained(hub: LiveHub, workers: list[Worker | RemoteAgent]) -> str:
    """Say what is left, and whether the hub still answers at all."""
    unfinished = await Task.filter(workspace_id=hub.workspace_id).exclude(status="succeeded")
    lines = [f"not drained in {DRAIN_SECONDS:.0f} s; unfinished tasks:"]
    lines += [f"  {t.id} {t.status} agent {t.target_agent_id}" for t in unfinished[:20]]
    for worker in workers:
        lines.append(
            f"  agent {worker.agent_id}: connected={worker.connected} "
            f"pending uplinks={worker.pending_uplinks} messages handled={len(worker.messages_seen)}"
        )
    try:
        response = await hub.http.get("/healthz", timeout=5)
        lines.append(f"hub /healthz: {response.status_code} {response.text[:200]}")
    except Exception as error:
        lines.append(f"hub /healthz did not answer ({error!r}); where it was:")
        lines.append(stacks_of(hub.process))
    return "\n".join(lines)


async def _check_log(hub: LiveHub, workers: list[Worker | RemoteAgent], kills: int) -> None:
    events = await Event.filter(workspace_id=hub.workspace_id).order_by("sequence")
    by_agent: dict[str, list[Event]] = defaultdict(list)
    for event in events:
        by_agent[event.actor].append(event)
    tasks = [e for e in events if e.type == "task.created"]
    messages_in = [e for e in events if e.type == "message.created" and e.actor.startswith("user:")]
    assert tasks and messages_in
    for worker in workers:
        agent_id = worker.agent_id
        mine = by_agent[f"agent:{agent_id}"]
        # Uplinks: each step of each task once, one answer per message, nothing else twice.
        steps = Counter(
            (e.type, e.task_id, e.payload.get("status"), e.payload.get("progress"))
            for e in mine
            if e.type.startswith("task.")
        )
        assert all(count == 1 for count in steps.values()), steps.most_common(3)
        answers = Counter(e.payload["content"] for e in mine if e.type == "message.created")
        expected = {
            f"echo {e.payload['messageId']}"
            for e in messages_in
            if e.recipient_agent_id == agent_id
        }
        assert set(answers) == expected and all(c == 1 for c in answers.values())
        # Downlinks: every one addressed to the agent handled once, in sequence order.
        addressed = [
            int(e.sequence)
            for e in events
            if e.recipient_agent_id == agent_id and e.type == "message.created"
        ]
        assert worker.messages_seen == addressed
        assigned = {e.payload["taskId"] for e in tasks if e.payload["targetAgentId"] == agent_id}
        assert set(worker.task_starts) == assigned
        assert all(count == 1 for count in worker.task_starts.values())
    typescript = [w for w in workers if isinstance(w, RemoteAgent)]
    # The TypeScript agents did their share of the work (each check above held for them).
    assert sum(len(w.task_starts) + len(w.messages_seen) for w in typescript) > 0
    print(
        f"\nchaos: {len(workers)} agents ({len(typescript)} TypeScript), {CHAOS_SECONDS:.0f} s, "
        f"{kills} sockets cut, {sum(w.connects for w in workers)} connections "
        f"({sum(w.connects for w in typescript)} TypeScript), "
        f"{len(tasks)} tasks, {len(messages_in)} messages, {len(events)} events, "
        f"{sum(w.duplicates_dropped for w in workers)} replayed duplicates dropped"
    )
