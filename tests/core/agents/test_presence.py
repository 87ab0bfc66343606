"""Presence: heartbeats, offline after two missed or at once when the connection's socket
closes, running tasks failed after the grace period; logged only for agents with open work,
shown live (a frame without a sequence) for the others.

The sweeper is driven with an explicit ``now`` so that no test waits for the clock, except
the one that proves the background loop runs at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta

import pytest

from hub.core.agents.presence import (
    PresenceSweeper,
    announce_connection,
    connection_closed,
    connection_lost,
    record_heartbeat,
    release_connection,
)
from hub.core.agents.registry import agent_view, confirm_agent, revoke_agent
from hub.core.errors import Conflict, Unauthorized
from hub.core.ids import new_id
from hub.core.log.bus import DEFAULT_BUS, PublishedEvent
from hub.core.log.events import append_event, events_after
from hub.core.store.models import Agent, AgentStatus, Task, Workspace
from hub.core.task_states import TaskStatus
from hub.protocol.clock import utcnow
from hub.testing import eventually
from tests.core.agent_setup import paired_agent

INTERVAL = 25.0
GRACE = 900.0


def sweeper() -> PresenceSweeper:
    return PresenceSweeper(heartbeat_interval_s=INTERVAL, grace_period_s=GRACE)


async def online_agent(workspace: Workspace, name: str = "builder") -> Agent:
    agent, _ = await paired_agent(workspace, name)
    await confirm_agent(workspace.id, agent.id, name, by="user:usr_owner")
    assert await record_heartbeat(agent)
    return await Agent.get(id=agent.id)


async def task_for(agent: Agent, status: TaskStatus) -> str:
    task_id = new_id("task")
    ws, by_agent = agent.workspace_id, f"agent:{agent.id}"
    await append_event(
        ws,
        "task.created",
        {"taskId": task_id, "title": f"a {status} task", "targetAgentId": agent.id},
        actor="user:usr_owner",
    )
    if status != TaskStatus.QUEUED:
        await append_event(ws, "task.accepted", {"taskId": task_id}, actor=by_agent)
    if status == TaskStatus.WAITING_FOR_HUMAN:
        await append_event(
            ws,
            "interaction.requested",
            {"interaction": {"id": new_id("interaction"), "type": "approval", "title": "Go?"}},
            actor=by_agent,
            task_id=task_id,
        )
    return task_id


async def types_of(workspace: Workspace) -> list[str]:
    return [e.type for e in await events_after(workspace.id, 0)]


@pytest.fixture
def shown() -> Iterator[list[PublishedEvent]]:
    """The presence frames shown live and kept in no log (``sequence`` 0)."""
    frames: list[PublishedEvent] = []

    def listen(event: PublishedEvent) -> None:
        if event.sequence == 0 and event.type.startswith("agent."):
            frames.append(event)

    DEFAULT_BUS.add_listener(listen)
    yield frames
    DEFAULT_BUS.remove_listener(listen)


def kinds(frames: list[PublishedEvent]) -> list[str]:
    return [frame.type for frame in frames]


async def test_the_first_heartbeat_brings_an_agent_online_once(
    workspace: Workspace, shown: list[PublishedEvent]
) -> None:
    agent, _ = await paired_agent(workspace)
    assert await record_heartbeat(agent) is True
    first = await Agent.get(id=agent.id)
    assert first.status == AgentStatus.ONLINE and first.last_heartbeat_at is not None
    assert agent_view(first)["connected"] is True
    assert await record_heartbeat(agent) is False
    second = await Agent.get(id=agent.id)
    assert (
        second.last_heartbeat_at is not None and second.last_heartbeat_at >= first.last_heartbeat_at
    )
    # Heartbeats are not logged, nor is an idle agent's change to online: it is shown.
    assert await types_of(workspace) == ["agent.paired"]
    assert kinds(shown) == ["agent.online"]
    assert shown[0].envelope["payload"] == {"agentId": agent.id, "name": agent.name}


async def test_two_missed_heartbeats_mark_the_agent_offline_and_keep_its_tasks(
    workspace: Workspace,
) -> None:
    agent = await online_agent(workspace)
    running = await task_for(agent, TaskStatus.RUNNING)
    last = agent.last_heartbeat_at
    assert last is not None
    early = await sweeper().sweep(now=last + timedelta(seconds=2 * INTERVAL - 1))
    assert early.offline == []
    report = await sweeper().sweep(now=last + timedelta(seconds=2 * INTERVAL + 1))
    assert report.offline == [agent.id] and report.failed == []
    offline = await Agent.get(id=agent.id)
    assert offline.status == AgentStatus.OFFLINE
    lost = connection_lost(offline)
    assert lost is not None and lost["message"] == "Agent connection lost"
    assert lost["lastHeartbeatAt"] == agent_view(offline)["lastHeartbeatAt"]
    assert agent_view(offline)["status"] == "offline"
    assert (await Task.get(id=running)).status == TaskStatus.RUNNING
    event = (await events_after(workspace.id, 0))[-1]
    assert event.type == "agent.offline" and event.actor == "system"
    assert event.payload["lastHeartbeatAt"] == lost["lastHeartbeatAt"]


@pytest.mark.parametrize("work", [None, TaskStatus.QUEUED, TaskStatus.WAITING_FOR_HUMAN])
async def test_a_heartbeat_after_going_offline_brings_the_agent_back(
    workspace: Workspace, shown: list[PublishedEvent], work: TaskStatus | None
) -> None:
    agent = await online_agent(workspace)
    if work is not None:
        await task_for(agent, work)
    assert agent.last_heartbeat_at is not None
    await sweeper().sweep(now=agent.last_heartbeat_at + timedelta(seconds=3 * INTERVAL))
    assert await record_heartbeat(agent) is True
    back = await Agent.get(id=agent.id)
    assert back.status == AgentStatus.ONLINE and connection_lost(back) is None
    logged = [t for t in await types_of(workspace) if t in ("agent.online", "agent.offline")]
    if work is None:  # nobody waits on it: shown, and gone
        assert logged == [] and kinds(shown) == ["agent.online", "agent.offline", "agent.online"]
    else:  # a person's work waits on it: "lost", then "back", in the log
        assert logged == ["agent.offline", "agent.online"] and kinds(shown) == ["agent.online"]


async def test_an_agent_that_came_back_is_not_marked_offline(workspace: Workspace) -> None:
    agent = await online_agent(workspace)
    stale = agent.last_heartbeat_at
    assert stale is not None
    await record_heartbeat(agent)  # lands after the sweeper read `stale`
    with pytest.raises(Conflict) as refused:
        await append_event(
            workspace.id,
            "agent.offline",
            {"agentId": agent.id, "lastHeartbeatAt": stale.isoformat()},
            actor="system",
        )
    assert refused.value.code == "agent_came_back"
    assert (await Agent.get(id=agent.id)).status == AgentStatus.ONLINE


async def test_after_the_grace_period_running_tasks_fail_as_unreachable(
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    _, workspace = await make_user()
    agent = await online_agent(workspace, "gone")
    bystander = await online_agent(workspace, "still here")
    running = await task_for(agent, TaskStatus.RUNNING)
    waiting = await task_for(agent, TaskStatus.WAITING_FOR_HUMAN)
    queued = await task_for(agent, TaskStatus.QUEUED)
    other = await task_for(bystander, TaskStatus.RUNNING)
    await record_heartbeat(bystander)
    last = agent.last_heartbeat_at
    assert last is not None
    await sweeper().sweep(now=last + timedelta(seconds=3 * INTERVAL))
    assert (await Agent.get(id=agent.id)).status == AgentStatus.OFFLINE
    early = await sweeper().sweep(now=last + timedelta(seconds=GRACE - 1))
    assert early.failed == []
    # The bystander is judged by its own (later) heartbeats, so only `agent` is unreachable.
    await record_heartbeat(bystander)
    report = await PresenceSweeper(heartbeat_interval_s=10 * GRACE, grace_period_s=GRACE).sweep(
        now=last + timedelta(seconds=GRACE + 1)
    )
    assert report.failed == [running]
    failed = await Task.get(id=running)
    assert failed.status == TaskStatus.FAILED and failed.error == "agent_unreachable"
    # The state machine has no waiting → failed; the answer still reaches the agent later.
    assert (await Task.get(id=waiting)).status == TaskStatus.WAITING_FOR_HUMAN
    assert (await Task.get(id=queued)).status == TaskStatus.QUEUED
    assert (await Task.get(id=other)).status == TaskStatus.RUNNING
    event = (await events_after(workspace.id, 0))[-1]
    assert (event.type, event.actor, event.task_id) == ("task.status_changed", "system", running)
    assert event.payload["error"] == "agent_unreachable"


async def test_two_sweepers_at_once_do_the_work_once(workspace: Workspace) -> None:
    agent = await online_agent(workspace)
    await task_for(agent, TaskStatus.RUNNING)
    assert agent.last_heartbeat_at is not None
    late = agent.last_heartbeat_at + timedelta(seconds=GRACE + 3 * INTERVAL)
    await asyncio.gather(sweeper().sweep(now=late), sweeper().sweep(now=late))
    await asyncio.gather(sweeper().sweep(now=late), sweeper().sweep(now=late))
    types = await types_of(workspace)
    assert types.count("agent.offline") == 1
    assert types.count("task.status_changed") == 1


async def test_a_revoked_agents_running_tasks_fail_after_the_grace_period(
    workspace: Workspace,
) -> None:
    agent = await online_agent(workspace)
    running = await task_for(agent, TaskStatus.RUNNING)
    await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    with pytest.raises(Unauthorized) as revoked:
        await record_heartbeat(agent)
    assert revoked.value.code == "credential_revoked"
    assert agent.last_heartbeat_at is not None
    await sweeper().sweep(now=agent.last_heartbeat_at + timedelta(seconds=GRACE + 1))
    assert (await Task.get(id=running)).status == TaskStatus.FAILED


async def test_the_background_sweeper_runs_until_stopped(workspace: Workspace) -> None:
    agent = await online_agent(workspace)
    await Agent.filter(id=agent.id).update(last_heartbeat_at=utcnow() - timedelta(seconds=60))
    background = PresenceSweeper(heartbeat_interval_s=0.2, grace_period_s=GRACE)
    background.start()
    try:

        async def offline() -> bool:
            return (await Agent.get(id=agent.id)).status == AgentStatus.OFFLINE

        await eventually(offline, within=10)
    finally:
        await background.stop()
    assert not background.running


async def test_a_closed_connection_marks_the_agent_offline_at_once_and_once(
    workspace: Workspace,
) -> None:
    agent = await online_agent(workspace)
    await task_for(agent, TaskStatus.RUNNING)  # a person would want to know
    await announce_connection(agent, "ses_1")
    assert await connection_closed(agent, "ses_1") is True
    offline = await Agent.get(id=agent.id)
    assert offline.status == AgentStatus.OFFLINE and connection_lost(offline) is not None
    assert offline.session_id is None  # the next hello claims the connection
    event = (await events_after(workspace.id, 0))[-1]
    assert (event.type, event.actor) == ("agent.offline", "system")
    assert event.payload["reason"] == "connection_closed"
    assert event.payload["sessionId"] == "ses_1"
    assert event.payload["lastHeartbeatAt"] == connection_lost(offline)["lastHeartbeatAt"]  # type: ignore[index]
    # The same silence judged again, by the socket or a sweeper, adds nothing.
    assert await connection_closed(agent, "ses_1") is False
    assert agent.last_heartbeat_at is not None
    late = await sweeper().sweep(now=agent.last_heartbeat_at + timedelta(seconds=3 * INTERVAL))
    assert late.offline == []
    assert (await types_of(workspace)).count("agent.offline") == 1
    # A clean reconnect (its hello, then its announcement): online again, and since no
    # socket held the agent, the announcement is a claim, not an event.
    assert await record_heartbeat(agent) is True
    await announce_connection(agent, "ses_2")
    back = await Agent.get(id=agent.id)
    assert back.status == AgentStatus.ONLINE and back.session_id == "ses_2"
    assert (await types_of(workspace))[-2:] == ["agent.offline", "agent.online"]


async def test_an_idle_agents_comings_and_goings_leave_the_log_alone(
    workspace: Workspace, shown: list[PublishedEvent]
) -> None:
    """A fleet reconnecting after a blip wrote three events per agent; now none."""
    agent = await online_agent(workspace)
    before = await types_of(workspace)
    for n in range(3):
        await announce_connection(agent, f"ses_{n}")
        assert (await Agent.get(id=agent.id)).session_id == f"ses_{n}"
        assert await connection_closed(agent, f"ses_{n}") is True
        assert (await Agent.get(id=agent.id)).status == AgentStatus.OFFLINE
    assert await types_of(workspace) == before
    assert kinds(shown) == ["agent.online"] + ["agent.offline", "agent.online"] * 2 + [
        "agent.offline"
    ]
    assert shown[-1].envelope["payload"]["reason"] == "connection_closed"


async def test_a_fleet_that_leaves_at_once_goes_offline_together(
    workspace: Workspace, shown: list[PublishedEvent]
) -> None:
    """Sockets closing together share one update; an agent with open work is still logged,
    and one whose socket was replaced stays online."""
    idle = [await online_agent(workspace, f"idle-{n}") for n in range(6)]
    busy, replaced = await online_agent(workspace, "busy"), await online_agent(workspace, "moved")
    await task_for(busy, TaskStatus.RUNNING)
    for agent in [*idle, busy, replaced]:
        await announce_connection(agent, f"ses_{agent.name}")
    await announce_connection(replaced, "ses_newer")
    before = await types_of(workspace)
    shown.clear()
    went = await asyncio.gather(
        *(connection_closed(agent, f"ses_{agent.name}") for agent in [*idle, busy, replaced])
    )
    assert went == [True] * 7 + [False]
    rows = {a.name: a for a in await Agent.filter(workspace_id=workspace.id)}
    assert all(rows[a.name].status == AgentStatus.OFFLINE for a in [*idle, busy])
    assert all(rows[a.name].session_id is None for a in [*idle, busy])
    assert (rows["moved"].status, rows["moved"].session_id) == (AgentStatus.ONLINE, "ses_newer")
    assert await types_of(workspace) == [*before, "agent.offline"]  # the busy one alone
    offline = [f for f in shown if f.type == "agent.offline"]
    assert sorted(f.envelope["payload"]["agentId"] for f in offline) == sorted(a.id for a in idle)
    assert all(f.envelope["payload"]["lastHeartbeatAt"] for f in offline)


async def test_a_second_socket_while_one_holds_the_agent_is_logged(workspace: Workspace) -> None:
    """The older socket may be alive (half-open, another process): it must read, in order
    among its downlink events, that it was replaced."""
    agent = await online_agent(workspace)
    first = await announce_connection(agent, "ses_1")
    assert "agent.connected" not in await types_of(workspace)
    second = await announce_connection(agent, "ses_2")
    connected = (await events_after(workspace.id, 0))[-1]
    assert connected.type == "agent.connected" and connected.payload["sessionId"] == "ses_2"
    assert second == connected.sequence > first
    assert (await Agent.get(id=agent.id)).session_id == "ses_2"


async def test_a_stopping_hub_lets_the_connection_go_and_keeps_presence(
    workspace: Workspace,
) -> None:
    agent = await online_agent(workspace)
    await announce_connection(agent, "ses_1")
    before = await types_of(workspace)
    await release_connection(agent, "ses_1")
    kept = await Agent.get(id=agent.id)
    assert kept.session_id is None and kept.status == AgentStatus.ONLINE
    await release_connection(agent, "ses_other")  # not its session: nothing
    await announce_connection(agent, "ses_2")  # after the restart: a claim, no event
    assert await types_of(workspace) == before


async def test_a_replaced_socket_that_closes_leaves_the_agent_online(
    workspace: Workspace,
) -> None:
    agent = await online_agent(workspace)
    await announce_connection(agent, "ses_old")
    await announce_connection(agent, "ses_new")  # another socket (or process) took over
    assert await connection_closed(agent, "ses_old") is False
    assert (await Agent.get(id=agent.id)).status == AgentStatus.ONLINE
    # Decided under the workspace's lock too: an old socket that read its row before the
    # new one announced itself is refused when its event is applied.
    current = await Agent.get(id=agent.id)
    assert current.last_heartbeat_at is not None
    with pytest.raises(Conflict) as refused:
        await append_event(
            workspace.id,
            "agent.offline",
            {
                "agentId": agent.id,
                "lastHeartbeatAt": current.last_heartbeat_at.isoformat(),
                "reason": "connection_closed",
                "sessionId": "ses_old",
            },
            actor="system",
        )
    assert refused.value.code == "connected_again"
    assert "agent.offline" not in await types_of(workspace)


async def test_the_sweeper_first_leaves_nothing_for_the_closed_socket(
    workspace: Workspace, shown: list[PublishedEvent]
) -> None:
    agent = await online_agent(workspace)
    await announce_connection(agent, "ses_1")
    assert agent.last_heartbeat_at is not None
    await sweeper().sweep(now=agent.last_heartbeat_at + timedelta(seconds=3 * INTERVAL))
    assert await connection_closed(agent, "ses_1") is False
    assert kinds(shown).count("agent.offline") == 1
    assert (await Agent.get(id=agent.id)).session_id is None  # its connection let go


async def test_a_reconnect_after_the_old_socket_marked_it_offline_brings_it_back(
    workspace: Workspace,
) -> None:
    """The old socket closes between the new one's hello (the agent was online: no event)
    and its announcement: the announcement brings the agent online again."""
    agent = await online_agent(workspace)
    await task_for(agent, TaskStatus.RUNNING)
    await announce_connection(agent, "ses_old")
    assert await record_heartbeat(agent) is False  # the new socket's hello
    assert await connection_closed(agent, "ses_old") is True
    await announce_connection(agent, "ses_new")
    assert (await Agent.get(id=agent.id)).status == AgentStatus.ONLINE
    assert (await types_of(workspace))[-2:] == ["agent.offline", "agent.online"]
