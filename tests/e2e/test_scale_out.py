"""Two hub processes on one PostgreSQL (issue: scale-out).

An agent on hub A and a browser client on hub B: B's client sees every event the agent
appends through A, in order, each once; a task created through B reaches the agent on A.
Then A is killed with -9: the agent reconnects to B, resends what was never acknowledged
with the same ids, and resumes; nothing is lost, nothing is stored twice.

Background work runs once across the processes: both outbox workers deliver from one
notification table to a real SMTP server, and each card is mailed once; both presence
sweepers watch an agent go silent, and it goes offline once.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event, events_after
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event
from hub.core.store.notification_models import Notification, NotificationStatus
from hub.testing import HubProcess, eventually, opened
from hub.testing import test_postgres_url as postgres_url
from tests.channels.peers import SmtpPeer
from tests.plugins.lap_client import raw_agent

pytestmark = pytest.mark.skipif(
    postgres_url() is None, reason="several hub processes share one PostgreSQL"
)

SECRET = "scale-out-secret-" + "s" * 32


async def seed(database_url: str) -> dict[str, Any]:
    async with opened(database_url):
        user, workspace = await create_user("two@example.com", "correct horse", "Two")
        _, token = await create_api_token(user, "test")
        code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
        agent, credential = await redeem_pairing_code(
            code, name="worker", runtime="test", version="1", capabilities=[], secret_key=SECRET
        )
        await confirm_agent(workspace.id, agent.id, "worker", by=f"user:{user.id}")
        conversation_id = new_id("conversation")
        await append_event(
            workspace.id,
            "conversation.created",
            {"conversationId": conversation_id, "title": "two hubs", "agentIds": [agent.id]},
            actor=f"user:{user.id}",
        )
    return {
        "workspace": workspace.id,
        "token": token,
        "agent": agent.id,
        "credential": credential,
        "conversation": conversation_id,
    }


async def read_client(
    url: str, token: str, workspace: str, after: int, until: int, seen: list[int]
) -> None:
    address = url.replace("http://", "ws://") + f"/ws/client?workspace={workspace}&after={after}"
    async with connect(
        address, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10
    ) as socket:
        while not seen or seen[-1] < until:
            frame = json.loads(await socket.recv())
            if isinstance(frame.get("sequence"), int) and frame["sequence"] > 0:
                seen.append(frame["sequence"])


async def test_two_processes_one_log(database_url: str, tmp_path: Path) -> None:
    data = await seed(database_url)
    env = {"LINEUP_SECRET_KEY": SECRET, "LINEUP_HEARTBEAT_INTERVAL_S": "1"}
    hub_a = HubProcess(database_url, tmp_path / "a", **env).start()
    hub_b = HubProcess(database_url, tmp_path / "b", **env).start()
    try:
        async with opened(database_url):
            start = (await events_after(data["workspace"], 0, limit=10_000))[-1].sequence

        # The agent on A says hello and sends 30 messages; B's client must see them all.
        seen_on_b: list[int] = []
        sent_ids: list[str] = []
        async with raw_agent(hub_a.url, data["credential"]) as (agent, _):
            welcome = await agent.hello(runtime="test")
            assert welcome["payload"]["agentId"] == data["agent"]
            online = welcome["payload"]["lastSequence"]
            client = asyncio.create_task(
                read_client(
                    hub_b.url, data["token"], data["workspace"], start, online + 30, seen_on_b
                )
            )
            await asyncio.sleep(0.5)
            for n in range(30):
                envelope_id = f"up_{n:03d}"
                sent_ids.append(envelope_id)
                answer = await agent.call(
                    "message.create",
                    {"content": f"m{n}", "conversationId": data["conversation"]},
                    id=envelope_id,
                )
                assert answer["type"] == "ack" and not answer["payload"]["duplicate"]
            await asyncio.wait_for(client, timeout=30)
            assert seen_on_b == list(range(start + 1, seen_on_b[-1] + 1))

            # A task created through B reaches the agent connected to A.
            async with httpx.AsyncClient(base_url=hub_b.url, timeout=10) as api:
                created = await api.post(
                    f"/api/v1/workspaces/{data['workspace']}/tasks",
                    headers={"Authorization": f"Bearer {data['token']}"},
                    json={"title": "from B", "description": "", "targetAgentId": data["agent"]},
                )
                assert created.status_code == 201, created.text
            assigned = await agent.frame_of_type("task.assigned", within=15)
            task_id = assigned["payload"]["task"]["id"]
            last_handled = assigned["sequence"]

            # Two more uplinks are sent; A dies before they are (necessarily) answered.
            pending = [
                await agent.send("task.accepted", {"taskId": task_id}, id="up_accept"),
                await agent.send(
                    "message.create",
                    {"content": "after", "conversationId": data["conversation"]},
                    id="up_after",
                ),
            ]
            hub_a.kill()

        # The agent comes back on B and resends what it cannot know was stored.
        async with raw_agent(hub_b.url, data["credential"]) as (agent, _):
            await agent.hello(
                runtime="test", lastSequence=last_handled, epoch=welcome["payload"]["epoch"]
            )
            for envelope_id, kind, payload in (
                ("up_accept", "task.accepted", {"taskId": task_id}),
                (
                    "up_after",
                    "message.create",
                    {"content": "after", "conversationId": data["conversation"]},
                ),
            ):
                answer = await agent.call(kind, payload, id=envelope_id)
                assert answer["type"] == "ack", answer
            assert pending == ["up_accept", "up_after"]
            # Nothing addressed to the agent is replayed twice.
            assert all(
                f.get("sequence", 0) <= last_handled or f["type"] != "task.assigned"
                for f in await agent.quiet(1.0)
            )

        async with opened(database_url):
            events = await events_after(data["workspace"], 0, limit=10_000)
        ids = [e.id for e in events]
        assert len(ids) == len(set(ids))
        for envelope_id in [*sent_ids, "up_accept", "up_after"]:
            assert ids.count(envelope_id) == 1, envelope_id
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    finally:
        hub_a.stop()
        hub_b.stop()


CARDS = 40


def card(title: str) -> dict[str, Any]:
    options = [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}]
    return {"id": new_id("interaction"), "type": "approval", "title": title, "options": options}


async def test_background_work_runs_once_across_processes(
    database_url: str, tmp_path: Path
) -> None:
    data = await seed(database_url)
    smtp = SmtpPeer()
    smtp.start()
    env = {
        "LINEUP_SECRET_KEY": SECRET,
        "LINEUP_HEARTBEAT_INTERVAL_S": "0.5",
        "LINEUP_SMTP_URL": smtp.url,
    }
    hub_a = HubProcess(database_url, tmp_path / "a", **env).start()
    hub_b = HubProcess(database_url, tmp_path / "b", **env).start()
    titles = [f"Card #{n:03d}" for n in range(CARDS)]
    try:
        async with opened(database_url):
            task_id = new_id("task")
            await append_event(
                data["workspace"],
                "task.created",
                {"taskId": task_id, "title": "Release", "targetAgentId": data["agent"]},
                actor="system",
            )
        # The agent asks half its cards through A, half through B: the notification rows
        # land in one table that both outbox workers claim from.
        for hub, half in ((hub_a, titles[: CARDS // 2]), (hub_b, titles[CARDS // 2 :])):
            async with raw_agent(hub.url, data["credential"]) as (agent, _):
                await agent.hello(runtime="test")
                if hub is hub_a:
                    accepted = await agent.call("task.accepted", {"taskId": task_id})
                    assert accepted["type"] == "ack", accepted
                for title in half:
                    asked = await agent.call(
                        "interaction.requested", {"interaction": card(title)}, taskId=task_id
                    )
                    assert asked["type"] == "ack", asked
        # Then the agent is silent: both presence sweepers see it, one agent.offline.
        async with opened(database_url):

            async def all_sent() -> bool:
                rows = await Notification.filter(surface="email").values_list("status", flat=True)
                return len(rows) == CARDS and set(rows) == {NotificationStatus.SENT}

            await eventually(all_sent, within=60)

            async def presence() -> list[str]:
                return list(
                    await Event.filter(
                        workspace_id=data["workspace"], type__in=["agent.online", "agent.offline"]
                    )
                    .order_by("sequence")
                    .values_list("type", flat=True)
                )

            async def offline_at_last() -> bool:
                return (await presence())[-1:] == ["agent.offline"]

            await eventually(offline_at_last)
            await asyncio.sleep(1.0)  # several more sweeps on each hub
            changes = await presence()
        mails = Counter(str(m["Subject"]).split(": ", 1)[1] for m in smtp.messages)
        assert mails == Counter(titles), "each card mailed exactly once"
        # Each time the agent came online (a slow machine may see it lapse between the two
        # sockets), it went offline once, though two sweepers watched it.
        assert changes == ["agent.online", "agent.offline"] * (len(changes) // 2)
        assert changes
    finally:
        hub_a.stop()
        hub_b.stop()
        smtp.stop()


async def test_one_socket_per_agent_across_processes(database_url: str, tmp_path: Path) -> None:
    """The agent connects to A, then to B: A closes its older socket (4409), as one process
    does with two sockets, and what is addressed to the agent goes to B's only."""
    data = await seed(database_url)
    env = {"LINEUP_SECRET_KEY": SECRET, "LINEUP_HEARTBEAT_INTERVAL_S": "1"}
    hub_a = HubProcess(database_url, tmp_path / "a", **env).start()
    hub_b = HubProcess(database_url, tmp_path / "b", **env).start()
    try:
        async with raw_agent(hub_a.url, data["credential"]) as (on_a, socket_a):
            welcome = await on_a.hello(runtime="test")
            async with raw_agent(hub_b.url, data["credential"]) as (on_b, socket_b):
                await on_b.hello(runtime="test", lastSequence=welcome["payload"]["lastSequence"])
                replaced = await on_a.frame_of_type("error", within=10)
                assert replaced["payload"]["code"] == "connection_replaced"
                with pytest.raises(ConnectionClosed):
                    await on_a.recv(within=10)
                assert socket_a.close_code == 4409

                async with opened(database_url):
                    task_id = new_id("task")
                    await append_event(
                        data["workspace"],
                        "task.created",
                        {"taskId": task_id, "title": "to B", "targetAgentId": data["agent"]},
                        actor="system",
                    )
                assigned = await on_b.frame_of_type("task.assigned", within=15)
                assert assigned["payload"]["task"]["id"] == task_id
                assert (await on_b.call("agent.heartbeat"))["type"] == "ack"
                assert socket_b.close_code is None
        assert on_a.downlinks == []
    finally:
        hub_a.stop()
        hub_b.stop()
