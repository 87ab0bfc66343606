"""Presence over real sockets: ``lineup serve``, the SDK agent, and a relay that cuts its
connection the way a killed process or a pulled cable does (no close handshake).

The hub's heartbeat interval is 30 s here, so an agent shown offline within seconds was
marked so by its closed socket, never by the heartbeat rule (two missed intervals).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from hub.core.store.models import Agent, AgentStatus, Event, Interaction
from hub.sdk import Resolution
from hub.sdk.task import Task
from hub.testing import eventually
from tests.plugins.lap_client import raw_agent
from tests.sdk.chaos_proxy import ChaosProxy
from tests.sdk.live import LiveHub, live_hub

HEARTBEAT_INTERVAL_S = 30.0
LOST_WITHIN_S = 2.0  # "a dropped agent shown as lost within 2 s" (the bound)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(
        db, tmp_path / "hub", LINEUP_HEARTBEAT_INTERVAL_S=str(HEARTBEAT_INTERVAL_S)
    ) as running:
        yield running


async def status_of(agent_id: str) -> AgentStatus:
    return (await Agent.get(id=agent_id)).status


async def presence(workspace_id: str) -> list[Event]:
    return list(
        await Event.filter(
            workspace_id=workspace_id, type__in=["agent.online", "agent.offline"]
        ).order_by("sequence")
    )


@pytest.mark.parametrize("busy", [True, False], ids=["with work", "idle"])
async def test_a_cut_connection_shows_the_agent_offline_at_once_and_a_reconnect_online(
    hub: LiveHub, tmp_path: Path, busy: bool
) -> None:
    """With a task waiting on it, the log says the agent was lost and came back (a person
    needs that); idle, a browser is shown both live and the log keeps neither."""
    async with (
        ChaosProxy(hub.process.port) as proxy,
        hub.agent(tmp_path / "agent", "Builder", via=proxy.url) as agent,
        hub.client_socket() as browser,
    ):
        agent_id = agent.agent_id
        assert agent_id is not None
        if busy:
            await hub.task(agent_id, "Rebuild the index")
        assert await status_of(agent_id) == AgentStatus.ONLINE
        before = len(await presence(hub.workspace_id))

        proxy.refusing = True  # it keeps trying; it cannot come back yet
        assert proxy.kill_one()

        async def offline() -> bool:
            return await status_of(agent_id) == AgentStatus.OFFLINE

        await eventually(offline, within=LOST_WITHIN_S)
        gone = await browser.next_of("agent.offline")
        assert gone["payload"]["reason"] == "connection_closed"
        assert gone["payload"]["lastHeartbeatAt"] is not None
        assert (gone["sequence"] > 0) is busy  # in the log only when a person needs it

        proxy.refusing = False  # a clean reconnect brings it back, as after any absence

        async def online() -> bool:
            return await status_of(agent_id) == AgentStatus.ONLINE

        await eventually(online)
        back = await browser.next_of("agent.online")
        assert (back["sequence"] > 0) is busy
        changes = [e.type for e in (await presence(hub.workspace_id))[before:]]
        assert changes == (["agent.offline", "agent.online"] if busy else [])


async def test_a_replaced_socket_leaves_the_agent_online(hub: LiveHub) -> None:
    """Two sockets of one credential: the older is closed (4409) and says nothing of the
    agent, which is there on the newer one."""
    async with raw_agent(hub.url) as (pairing, _):
        await pairing.hello(pairingCode=await hub.pairing_code(), name="twice")
        paired = next(f for f in pairing.others if f["type"] == "agent.paired")
    agent_id, credential = paired["payload"]["agentId"], paired["payload"]["credential"]
    async with raw_agent(hub.url, credential) as (older, older_socket):
        await older.hello()
        before = len(await presence(hub.workspace_id))
        async with raw_agent(hub.url, credential) as (newer, _):
            await newer.hello()
            with pytest.raises(ConnectionClosed):
                while True:
                    await older.recv()
            assert older_socket.close_code == 4409
            # The older session's end has run once its socket is closed and a frame of the
            # newer one was answered since; nothing more is coming from it.
            assert (await newer.call("agent.heartbeat"))["type"] == "ack"
            await asyncio.sleep(0.5)
            assert await status_of(agent_id) == AgentStatus.ONLINE
            assert [e.type for e in (await presence(hub.workspace_id))[before:]] == []


async def test_an_answer_given_while_the_agent_is_away_is_delivered_when_it_returns(
    hub: LiveHub, tmp_path: Path
) -> None:
    answers: list[Resolution] = []
    async with (
        ChaosProxy(hub.process.port) as proxy,
        hub.agent(tmp_path / "agent", "Deployer", via=proxy.url) as agent,
    ):

        @agent.on_task
        async def work(task: Task) -> None:
            await task.accept()
            answers.append(await task.request_approval("Ship the release?"))

        assert agent.agent_id is not None
        task_id = await hub.task(agent.agent_id, "Release")

        async def asked() -> Interaction | None:
            return await Interaction.filter(task_id=task_id).first()

        card = await eventually(asked)
        proxy.refusing = True
        assert proxy.kill_one()

        async def offline() -> bool:
            return await status_of(card.agent_id or "") == AgentStatus.OFFLINE

        await eventually(offline, within=LOST_WITHIN_S)
        answered = await hub.respond(card.id, "approve")
        assert answered["status"] == "resolved" and answered["deliveredAt"] is None

        proxy.refusing = False
        await eventually(lambda: answers)
        assert answers[0].approved
        shown = await hub.api("GET", f"/interactions/{card.id}")
        assert shown["deliveredAt"] is not None
        moment = datetime.fromisoformat  # isoformat drops zero microseconds: compare moments
        assert moment(shown["deliveredAt"]) > moment(shown["respondedAt"])
        delivered = await Event.filter(
            workspace_id=hub.workspace_id, type="interaction.delivered"
        ).values_list("payload", flat=True)
        assert [p["interactionId"] for p in delivered] == [card.id]  # type: ignore[index]
