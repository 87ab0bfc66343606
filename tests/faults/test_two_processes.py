"""Two hub processes on one PostgreSQL, three faults at once: nothing lost, nothing doubled.

While numbered messages stream in, the faults are:

* **resends across processes**: each sending agent's socket is closed under it now and
  then; it reconnects to the *other* process and resends every envelope that was not
  acknowledged, some of which the first process is committing at that moment. Another
  agent sends each of its envelopes through one process and at once, from a new socket
  (which replaces the first: one live socket per agent), through the other. Every answer
  is an ack, and of two answers to one envelope one is a ``duplicate``.
* **a slow outbox channel**: the SMTP relay answers each mail late, and the outbox lease is
  a few deliveries long, so a worker's batch outlives its lease and the other process's
  worker takes the rest over: a backlog of cards waits in the outbox when the processes
  start (the first worker up claims a whole batch of it), more are asked during the run.
  Each card is mailed once.
* **lost notifications**: the listening connection of one process's relay is terminated
  (``pg_terminate_backend``) while tasks for an agent connected to that process are
  created through the other. The agent gets each ``task.assigned`` once (the log watch
  reads what the relay missed), and the relay reconnects.

At the end every envelope is stored once for its actor at the sequence its ack named, and
the sequence has no gap. Sized by ``LINEUP_FAULT_EVENTS`` (``make faults``: 20,000).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from hub.channels.email.channel import EmailChannel
from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.log.relay import APPLICATION_NAME
from hub.core.notify.preferences import Surface, declare_surface, withdraw_surface
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event
from hub.core.store.notification_models import Notification, NotificationStatus
from hub.testing import HubProcess, eventually, opened
from hub.testing import test_postgres_url as postgres_url
from tests.channels.peers import SmtpPeer
from tests.e2e.test_scale_out import card
from tests.faults.sender import Sender
from tests.figures import EVENTS_VERIFIED, FAULTS_INJECTED, record
from tests.plugins.lap_client import ANSWER_TYPES, RawAgent, raw_agent

SIZE = int(os.environ.get("LINEUP_FAULT_EVENTS", "5000"))
EVENTS = SIZE // 10  # streamed by the senders: 500 in `make test`, 2,000 in `make faults`
SENDERS = 4
PAIRS = max(20, SIZE // 250)  # envelopes sent to both processes at once
BACKLOG = max(40, SIZE // 100)  # cards waiting in the outbox when the processes start
MAILS = BACKLOG // 2  # asked during the run
TERMINATIONS = max(4, SIZE // 2000)  # of one relay's listening connection
TASKS_PER_TERMINATION = 3
SMTP_DELAY_S = 0.25
# Eight deliveries long: a batch outlives it, a single delivery (0.25 s) stays well inside.
OUTBOX_LEASE_S = 2.0
RUN_LIMIT_S = 120.0 + SIZE / 100

SECRET = "two-processes-secret-" + "t" * 32

pytestmark = [
    pytest.mark.timeout(RUN_LIMIT_S + 60),
    pytest.mark.skipif(postgres_url() is None, reason="several hub processes share one PostgreSQL"),
]


def dsn(database_url: str) -> str:
    return urlunsplit(urlsplit(database_url)._replace(scheme="postgresql", query=""))


async def seed(backlog: list[str]) -> dict[str, Any]:
    """A person, their token, and confirmed agents: senders, a pair sender, a card asker
    with its task and the ``backlog`` of cards it asked already, and a quiet agent that only
    receives."""
    user, workspace = await create_user("faults@example.com", "correct horse", "Faults")
    _, token = await create_api_token(user, "test")
    credentials: dict[str, str] = {}
    agent_ids: dict[str, str] = {}
    conversations: dict[str, str] = {}
    names = [f"sender-{n}" for n in range(SENDERS)] + ["pairs", "cards", "quiet"]
    for name in names:
        code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
        agent, credential = await redeem_pairing_code(
            code, name=name, runtime="test", version="1", capabilities=[], secret_key=SECRET
        )
        await confirm_agent(workspace.id, agent.id, name, by=f"user:{user.id}")
        credentials[name], agent_ids[name] = credential, agent.id
        conversations[name] = new_id("conversation")
        await append_event(
            workspace.id,
            "conversation.created",
            {"conversationId": conversations[name], "title": name, "agentIds": [agent.id]},
            actor=f"user:{user.id}",
        )
    card_task = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": card_task, "title": "Release", "targetAgentId": agent_ids["cards"]},
        actor="system",
    )
    by_cards = f"agent:{agent_ids['cards']}"
    await append_event(workspace.id, "task.accepted", {"taskId": card_task}, actor=by_cards)
    # What the hub processes will do with their email channel: write a row per card.
    declare_surface(
        Surface(
            "email",
            defaults=EmailChannel.default_events,
            needs_account=EmailChannel.needs_account,
        )
    )
    try:
        for title in backlog:
            await append_event(
                workspace.id,
                "interaction.requested",
                {"interaction": card(title)},
                actor=by_cards,
                task_id=card_task,
            )
    finally:
        withdraw_surface("email")
    return {
        "workspace": workspace.id,
        "token": token,
        "credentials": credentials,
        "agents": agent_ids,
        "conversations": conversations,
        "card_task": card_task,
    }


async def stream_with_drops(senders: list[Sender]) -> int:
    """Run the senders; close one's socket every tenth of a second or so until all are done."""
    running = [asyncio.create_task(s.run(RUN_LIMIT_S)) for s in senders]
    drops = 0
    try:
        while not all(s.done for s in senders):
            await asyncio.sleep(random.uniform(0.05, 0.2))
            busy = [s for s in senders if not s.done]
            if busy:
                await random.choice(busy).drop()
                drops += 1
        await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
    return drops


async def send_pairs(url_a: str, url_b: str, credential: str, conversation_id: str) -> list[str]:
    """Each envelope through A, then at once through B from a new socket, which replaces
    A's: A's copy may be committing while B's arrives. B answers with an ack; A with an ack
    too unless its socket was closed as replaced first; one of two acks is a duplicate."""
    ids = []
    for n in range(PAIRS):
        envelope_id = f"pair-{n:04d}"
        ids.append(envelope_id)
        payload = {"content": f"pair {n}"}
        async with raw_agent(url_a, credential) as (on_a, _):
            await on_a.hello(runtime="test")
            await on_a.send(
                "message.create", payload, id=envelope_id, conversationId=conversation_id
            )
            async with raw_agent(url_b, credential) as (on_b, _):
                await on_b.hello(runtime="test")
                await on_b.send(
                    "message.create", payload, id=envelope_id, conversationId=conversation_id
                )
                answer_b = await on_b.answer(envelope_id, within=20)
            try:
                answers = [await on_a.answer(envelope_id, within=20), answer_b]
            except ConnectionClosed:  # replaced before it answered
                answers = [answer_b]
        assert [a["type"] for a in answers] == ["ack"] * len(answers), answers
        if len(answers) == 2:
            assert sorted(a["payload"]["duplicate"] for a in answers) == [False, True], answers
            assert answers[0]["payload"]["sequence"] == answers[1]["payload"]["sequence"]
    return ids


async def ask_cards(agent: RawAgent, task_id: str, titles: list[str]) -> None:
    """Cards asked without waiting for each answer: their mails land in the one outbox table
    both processes deliver from quickly, so a worker's batch is many deliveries long."""
    waiting = {
        await agent.send("interaction.requested", {"interaction": card(title)}, taskId=task_id)
        for title in titles
    }
    while waiting:
        frame = await agent.recv(within=20)
        if frame["type"] in ANSWER_TYPES and frame["payload"].get("id") in waiting:
            assert frame["type"] == "ack", frame
            waiting.discard(frame["payload"]["id"])


async def relay_backend(admin: asyncpg.Connection, hub: HubProcess) -> int:
    assert hub.process is not None
    name = APPLICATION_NAME.format(pid=hub.process.pid)

    async def listening() -> int | None:
        pid = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1", name
        )
        return int(pid) if pid else None

    pid: int = await eventually(listening, within=30, every=0.05)
    return pid


async def tasks_while_relay_is_cut(
    admin: asyncpg.Connection, hub_a: HubProcess, hub_b: HubProcess, data: dict[str, Any]
) -> list[str]:
    """Cut A's relay, then at once create tasks for A's quiet agent through B; again, each
    time the relay is back."""
    created = []
    async with httpx.AsyncClient(base_url=hub_b.url, timeout=20) as api:

        async def create(title: str) -> str:
            response = await api.post(
                f"/api/v1/workspaces/{data['workspace']}/tasks",
                headers={"Authorization": f"Bearer {data['token']}"},
                json={"title": title, "description": "", "targetAgentId": data["agents"]["quiet"]},
            )
            assert response.status_code == 201, response.text
            return str(response.json()["id"])

        for round_ in range(TERMINATIONS):
            backend = await relay_backend(admin, hub_a)
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", backend)
            record(FAULTS_INJECTED)
            titles = [f"cut {round_} task {n}" for n in range(TASKS_PER_TERMINATION)]
            created += await asyncio.gather(*(create(title) for title in titles))
            await asyncio.sleep(random.uniform(0.3, 0.8))
    return created


async def receive_tasks(quiet: RawAgent, expected: list[str], within: float) -> Counter[str]:
    """Every ``task.assigned`` the quiet agent gets until it has all of ``expected`` and
    then a second and a half of silence."""
    assigned: Counter[str] = Counter()
    async with asyncio.timeout(within):
        while not set(expected) <= set(assigned):
            frame = await quiet.frame_of_type("task.assigned", within=within)
            assigned[frame["payload"]["task"]["id"]] += 1
    for frame in await quiet.quiet(1.5):
        if frame["type"] == "task.assigned":
            assigned[frame["payload"]["task"]["id"]] += 1
    return assigned


def count_lines(hubs: list[HubProcess], pattern: str) -> int:
    return sum(len(re.findall(pattern, hub.log())) for hub in hubs)


async def test_two_processes_resends_slow_mail_and_lost_notifications(
    database_url: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    smtp = SmtpPeer(delay_s=SMTP_DELAY_S)
    smtp.start()
    env = {
        "LINEUP_SECRET_KEY": SECRET,
        "LINEUP_HEARTBEAT_INTERVAL_S": "1",
        "LINEUP_SMTP_URL": smtp.url,
        "LINEUP_OUTBOX_LEASE_S": str(OUTBOX_LEASE_S),
    }
    hub_a = HubProcess(database_url, tmp_path / "a", **env)
    hub_b = HubProcess(database_url, tmp_path / "b", **env)
    admin = await asyncpg.connect(dsn(database_url))
    backlog = [f"Backlog #{n:04d}" for n in range(BACKLOG)]
    titles = [f"Card #{n:04d}" for n in range(MAILS)]
    try:
        async with opened(database_url):
            data = await seed(backlog)
        hub_a.start()
        hub_b.start()
        senders = [
            Sender(
                (hub_a if n % 2 else hub_b).url,
                data["credentials"][f"sender-{n}"],
                data["conversations"][f"sender-{n}"],
                f"s{n}",
                EVENTS // SENDERS,
                also_via=((hub_b if n % 2 else hub_a).url,),
            )
            for n in range(SENDERS)
        ]
        pairs, cards = data["credentials"]["pairs"], data["credentials"]["cards"]
        async with (
            asyncio.timeout(RUN_LIMIT_S),
            raw_agent(hub_b.url, cards) as (cards_on_b, _),
            raw_agent(hub_a.url, data["credentials"]["quiet"]) as (quiet, _),
        ):
            for agent in (cards_on_b, quiet):
                await agent.hello(runtime="test")
            # The quiet agent reads nothing until the run is over, but stays alive: on a
            # busy machine the run outlasts the silence the hub allows a socket.
            async with quiet.beating():
                drops, pair_ids, _, task_ids = await asyncio.gather(
                    stream_with_drops(senders),
                    send_pairs(hub_a.url, hub_b.url, pairs, data["conversations"]["pairs"]),
                    ask_cards(cards_on_b, data["card_task"], titles),
                    tasks_while_relay_is_cut(admin, hub_a, hub_b, data),
                )
                assigned = await receive_tasks(quiet, task_ids, within=30)
            # The relay came back after its last cut.
            await relay_backend(admin, hub_a)

            async with opened(database_url):

                async def all_mailed() -> bool:
                    rows = await Notification.filter(surface="email").values_list(
                        "status", flat=True
                    )
                    return len(rows) == BACKLOG + MAILS and set(rows) == {NotificationStatus.SENT}

                await eventually(all_mailed, within=RUN_LIMIT_S / 2)
                events = await Event.filter(workspace_id=data["workspace"]).order_by("sequence")

        # Nothing lost, nothing doubled.
        assert all(s.done for s in senders)
        assert [e for s in senders for e in s.errors] == [], "every resend was answered by an ack"
        sequences = [int(e.sequence) for e in events]
        assert sequences == list(range(1, len(sequences) + 1)), "the sequence has a gap"
        stored = Counter((e.actor, e.id) for e in events)
        assert max(stored.values()) == 1
        sequence_of = {(e.actor, e.id): int(e.sequence) for e in events}
        for n, sender in enumerate(senders):
            actor = f"agent:{data['agents'][f'sender-{n}']}"
            for envelope_id, sequence in sender.acked.items():
                assert sequence_of[(actor, envelope_id)] == sequence, envelope_id
        pairs_actor = f"agent:{data['agents']['pairs']}"
        assert all((pairs_actor, envelope_id) in stored for envelope_id in pair_ids)
        mails = Counter(str(m["Subject"]).split(": ", 1)[1] for m in smtp.messages)
        assert mails == Counter(backlog + titles), "each card mailed exactly once"
        # No worker lost a row's lease while delivering it (which could mail it twice later).
        assert count_lines([hub_a, hub_b], r"may be sent again") == 0
        assert assigned == Counter(task_ids), "each task assigned to the quiet agent once"

        resent = sum(s.resent for s in senders)
        takeovers = count_lines([hub_a, hub_b], r"was taken over by another worker")
        caught_up = re.findall(r"(\d+) events of \S+ up to \d+ reached the log", hub_a.log())
        record(EVENTS_VERIFIED, len(events))
        record(FAULTS_INJECTED, drops + PAIRS)
        print(
            f"\ntwo processes: {len(events)} events, {sum(len(s.acked) for s in senders)} "
            f"streamed, {drops} sockets dropped, {resent} resent across processes, {PAIRS} "
            f"pairs sent to both at once; {BACKLOG + MAILS} mails, {takeovers} times a worker "
            f"found a row of its batch taken over; {TERMINATIONS} relay connections cut, "
            f"{len(task_ids)} tasks assigned meanwhile, {sum(map(int, caught_up))} events "
            f"caught up by A's log watch ({len(caught_up)} times); "
            f"{time.monotonic() - started:.1f} s"
        )
        # Each fault did happen: resends, leases run out mid-batch, notifications missed.
        assert resent > 0 and takeovers > 0 and caught_up
    finally:
        await admin.close()
        hub_a.stop()
        hub_b.stop()
        smtp.stop()
