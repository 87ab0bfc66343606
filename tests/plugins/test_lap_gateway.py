"""The LAP gateway over real sockets, against ``lineup serve`` running as its own process.

The person's side is played by the core's services in this process, on the database the
hub uses: what they append reaches the hub's sockets through the log (the hub checks it
every heartbeat interval), as an event written by another hub process would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from hub.core.agents.registry import revoke_agent
from hub.core.ids import new_id
from hub.core.log.events import append_event, events_after
from hub.core.people.credentials import hash_token
from hub.core.store.models import Agent, AgentStatus, Task, Workspace
from hub.core.task_states import TaskStatus
from hub.protocol.lap import MAX_FRAME_BYTES
from hub.testing import HubProcess, eventually
from tests.core.agent_setup import new_code
from tests.plugins.lap_client import RawAgent, raw_agent

INTERVAL = 0.5  # heartbeat interval of the hub under test
GRACE = 2.0  # its grace period before running tasks fail
HELLO_TIMEOUT = 5.0  # how long it waits for a hello, and at least for a greeted frame


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[HubProcess]:
    process = HubProcess(
        db,
        tmp_path / "hub",
        LINEUP_HEARTBEAT_INTERVAL_S=str(INTERVAL),
        LINEUP_AGENT_GRACE_PERIOD_S=str(GRACE),
        LINEUP_HELLO_TIMEOUT_S=str(HELLO_TIMEOUT),
    )
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


async def paired(hub: HubProcess, workspace: Workspace, name: str = "raw") -> tuple[str, str]:
    """Pair an agent over a socket; returns its id and credential."""
    code = await new_code(workspace)
    async with raw_agent(hub.url) as (agent, _):
        await agent.hello(pairingCode=code, name=name)
        frame = next(f for f in agent.others if f["type"] == "agent.paired")
    return frame["payload"]["agentId"], frame["payload"]["credential"]


async def assign_task(workspace: Workspace, agent_id: str, title: str = "a task") -> str:
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": title, "targetAgentId": agent_id},
        actor="user:usr_owner",
    )
    return task_id


async def refused_hello(hub: HubProcess, **payload: object) -> tuple[dict[str, object], int]:
    """Say hello without a credential; returns the error frame and the close code."""
    async with raw_agent(hub.url) as (agent, socket):
        hello_id = await agent.send("agent.hello", dict(payload))
        error = await agent.answer(hello_id)
        with pytest.raises(ConnectionClosed):
            await agent.recv()
        assert socket.close_code is not None
        return error["payload"], socket.close_code


async def test_an_agent_pairs_and_comes_back_with_its_credential(
    hub: HubProcess, workspace: Workspace
) -> None:
    code = await new_code(workspace)
    async with raw_agent(hub.url) as (agent, _):
        welcome = await agent.hello(
            pairingCode=code.lower(),
            name="laptop bot",
            runtime="python 3.11",
            agentVersion="0.3",
            capabilities=["tasks", "messages"],
        )
        paired_frame = agent.others.pop()
    assert paired_frame["type"] == "agent.paired"
    agent_id = paired_frame["payload"]["agentId"]
    credential = paired_frame["payload"]["credential"]
    assert paired_frame["payload"]["workspaceId"] == workspace.id
    assert welcome["payload"] == {
        "agentId": agent_id,
        "workspaceId": workspace.id,
        "heartbeatIntervalS": INTERVAL,
        "epoch": workspace.epoch,
        "lastSequence": 1,  # agent.paired: an idle agent's presence is not logged
        "status": "pending",
    }
    stored = await Agent.get(id=agent_id)
    assert stored.credential_hash == hash_token(credential)
    assert (stored.name, stored.runtime, stored.version) == ("laptop bot", "python 3.11", "0.3")
    # Then the closed socket marks it offline, as soon as the hub has seen the close. The
    # connection was claimed and let go, and the idle agent's presence only shown.
    assert [e.type for e in await events_after(workspace.id, 0)] == ["agent.paired"]

    async def offline() -> bool:
        return (await Agent.get(id=agent_id)).status == AgentStatus.OFFLINE

    await eventually(offline, within=2)

    async with raw_agent(hub.url, credential) as (agent, _):
        again = await agent.hello(lastSequence=welcome["payload"]["lastSequence"])
    assert again["payload"]["agentId"] == agent_id

    used, close_code = await refused_hello(hub, pairingCode=code, name="copycat")
    assert (used["code"], close_code) == ("pairing_code_used", 4410)
    assert used["hint"] and used["id"]
    unknown, close_code = await refused_hello(hub, pairingCode="ZZZZ-ZZZZ", name="guess")
    assert (unknown["code"], close_code) == ("pairing_code_unknown", 4401)
    nothing, close_code = await refused_hello(hub, name="who")
    assert (nothing["code"], close_code) == ("credential_required", 4401)

    with pytest.raises(InvalidStatus) as refused:
        async with raw_agent(hub.url, "lu_agt_made-up"):
            pass
    assert refused.value.response.status_code == 401
    body = json.loads(bytes(refused.value.response.body or b"{}"))
    assert body["error"]["code"] == "invalid_credential"


async def test_a_raw_client_gets_an_answer_for_every_frame_and_keeps_its_socket(
    hub: HubProcess,
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    _, workspace = await make_user()
    _, elsewhere = await make_user()
    agent_id, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, socket):
        await agent.hello()
        task_id = await assign_task(workspace, agent_id)
        assigned = await agent.frame_of_type("task.assigned")
        assert assigned["payload"]["task"]["id"] == task_id

        async def still_up() -> None:
            assert (await agent.call("agent.heartbeat"))["type"] == "ack"

        # A repeated id: the first result, marked duplicate, nothing changed.
        first = await agent.answer(await agent.send("task.accepted", {"taskId": task_id}, id="a-1"))
        again = await agent.answer(await agent.send("task.accepted", {"taskId": task_id}, id="a-1"))
        assert first["type"] == again["type"] == "ack"
        assert first["payload"]["duplicate"] is False and again["payload"]["duplicate"] is True
        assert first["payload"]["sequence"] == again["payload"]["sequence"]

        illegal = await agent.call("task.status_changed", {"taskId": task_id, "status": "queued"})
        assert (illegal["type"], illegal["payload"]["code"]) == ("error", "illegal_transition")
        assert illegal["payload"]["hint"]
        await still_up()

        await agent.send_text('{"id": "broken", "type": ')
        malformed = await agent.answer(None)
        assert malformed["payload"]["code"] == "malformed_json"
        await still_up()

        wrong_type = await agent.call(
            "task.status_changed", {"taskId": task_id, "status": "running", "progress": "lots"}
        )
        assert wrong_type["payload"]["code"] == "invalid_payload"
        assert "progress" in wrong_type["payload"]["message"]
        await agent.send_text(json.dumps({"id": "env-1", "type": 7, "payload": []}))
        bad_envelope = await agent.answer("env-1")
        assert bad_envelope["payload"]["code"] == "invalid_envelope"
        await still_up()

        # Over the limit in bytes, under it in characters: read, refused, socket kept. (Past it
        # in characters, the frame is not read to its end: tests/host/test_websocket_limits.)
        two_bytes_each = "é" * (MAX_FRAME_BYTES // 2)
        huge = await agent.call("message.create", {"content": two_bytes_each})
        assert huge["payload"]["code"] == "frame_too_large"
        await still_up()

        foreign = await agent.call(
            "task.status_changed",
            {"taskId": task_id, "status": "running", "progress": 90},
            workspaceId=elsewhere.id,
        )
        assert foreign["payload"]["code"] == "workspace_mismatch"
        assert (await Task.get(id=task_id)).progress is None

        unknown = await agent.call("agent.dance", {"style": "waltz"})
        assert (unknown["type"], unknown["payload"]["code"]) == ("warning", "unknown_type")

        extra = await agent.call(
            "task.status_changed",
            {"taskId": task_id, "status": "running", "progress": 50, "mood": "cheerful"},
            workspaceId=workspace.id,
            traceId="t-1",
        )
        assert extra["type"] == "ack"
        task = await Task.get(id=task_id)
        assert (task.status, task.progress) == (TaskStatus.RUNNING, 50)
        assert socket.close_code is None
    assert "payload.mood" in hub.log() and "traceId" in hub.log()


async def closed_by_the_hub(agent: RawAgent, within: float = 15.0) -> list[dict[str, object]]:
    """Every frame until the hub closes the socket; the test fails if it does not within
    ``within``, which is well short of the default hello deadline (30 s)."""
    frames = []
    with pytest.raises(ConnectionClosed):
        async with asyncio.timeout(within):
            while True:
                frames.append(await agent.recv(within))
    return frames


async def test_a_socket_that_says_no_hello_is_closed_at_the_deadline(hub: HubProcess) -> None:
    async def chatter(agent: RawAgent) -> None:
        while True:  # frames, but never a hello: the deadline still holds
            await agent.send("agent.heartbeat")
            await asyncio.sleep(INTERVAL / 2)

    async with (
        raw_agent(hub.url) as (silent, silent_socket),
        raw_agent(hub.url) as (
            chatty,
            chatty_socket,
        ),
    ):
        chatting = asyncio.create_task(chatter(chatty))
        try:
            for agent, socket in ((silent, silent_socket), (chatty, chatty_socket)):
                frames = await closed_by_the_hub(agent)
                assert frames[-1]["payload"]["code"] == "hello_timeout"  # type: ignore[index]
                assert socket.close_code == 1008
                assert socket.close_reason == '{"code":"hello_timeout"}'
        finally:
            chatting.cancel()
            await asyncio.gather(chatting, return_exceptions=True)


async def test_a_greeted_agent_that_goes_silent_is_closed(
    hub: HubProcess, workspace: Workspace
) -> None:
    _, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, socket):
        await agent.hello()
        for _ in range(24):  # heartbeats keep it open well past the silence allowed
            await asyncio.sleep(INTERVAL / 2)
            assert (await agent.call("agent.heartbeat"))["type"] == "ack"
        frames = await closed_by_the_hub(agent)
    assert frames[-1]["payload"]["code"] == "heartbeat_timeout"  # type: ignore[index]
    assert socket.close_code == 1008
    assert socket.close_reason == '{"code":"heartbeat_timeout"}'
    async with raw_agent(hub.url, credential) as (agent, _):
        assert (await agent.hello())["type"] == "agent.welcome"  # welcome back


async def test_a_hello_naming_another_workspace_is_refused(
    hub: HubProcess,
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    _, workspace = await make_user()
    _, elsewhere = await make_user()
    _, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, socket):
        hello_id = await agent.send("agent.hello", {}, workspaceId=elsewhere.id)
        refused = await agent.answer(hello_id)
        with pytest.raises(ConnectionClosed):
            await agent.recv()
    assert refused["payload"]["code"] == "workspace_mismatch"
    assert socket.close_code == 4403


async def test_a_revoked_credential_is_closed_within_a_second_and_refused_after(
    hub: HubProcess, workspace: Workspace
) -> None:
    agent_id, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, socket):
        await agent.hello()
        await revoke_agent(workspace.id, agent_id, by="user:usr_owner")
        # Revoked in another process than the socket's, which notifies nobody on SQLite: the
        # hub's log watch (every 0.25 s here) must close it within a second.
        revoked = await agent.frame_of_type("error", within=1.0)
        with pytest.raises(ConnectionClosed):
            await agent.recv(within=1.0)
    assert revoked["payload"]["code"] == "credential_revoked"
    assert socket.close_code == 4401
    with pytest.raises(InvalidStatus) as refused:
        async with raw_agent(hub.url, credential):
            pass
    assert refused.value.response.status_code == 401
    assert b"credential_revoked" in bytes(refused.value.response.body or b"")


async def test_a_reconnecting_agent_gets_every_missed_downlink_once_and_in_order(
    hub: HubProcess, workspace: Workspace
) -> None:
    agent_id, credential = await paired(hub, workspace)
    other_id, _ = await paired(hub, workspace, "other")
    async with raw_agent(hub.url, credential) as (agent, _):
        welcome = (await agent.hello())["payload"]
    seen = welcome["lastSequence"]

    # While it is away: three tasks, one for another agent, a message, a cancel request.
    conversation = new_id("conversation")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation, "title": "c", "agentIds": [agent_id]},
        actor="user:usr_owner",
    )
    tasks = [await assign_task(workspace, agent_id, f"task {n}") for n in range(3)]
    await assign_task(workspace, other_id, "not yours")
    await append_event(
        workspace.id,
        "message.created",
        {
            "messageId": new_id("message"),
            "conversationId": conversation,
            "content": "also this",
            "targetAgentId": agent_id,
        },
        actor="user:usr_owner",
    )
    await append_event(
        workspace.id,
        "task.cancel_requested",
        {"taskId": tasks[0], "reason": "changed my mind"},
        actor="user:usr_owner",
    )

    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello(lastSequence=seen, epoch=welcome["epoch"])
        replayed = [await agent.downlink() for _ in range(5)]
        assert await agent.quiet(3 * INTERVAL) == []  # once: nothing more, nothing repeated
    assert [f["type"] for f in replayed] == [
        "task.assigned",
        "task.assigned",
        "task.assigned",
        "message.delivered",
        "task.cancel_requested",
    ]
    sequences = [f["sequence"] for f in replayed]
    assert sequences == sorted(set(sequences)) and sequences[0] > seen
    assert [f["payload"]["task"]["id"] for f in replayed[:3]] == tasks
    assert replayed[3]["payload"]["message"]["content"] == "also this"
    assert replayed[4]["payload"] == {"taskId": tasks[0], "reason": "changed my mind"}
    assert {f["workspaceId"] for f in replayed} == {workspace.id}

    # From the middle: only what came after; then live ones as they are appended.
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello(lastSequence=sequences[1], epoch=welcome["epoch"])
        assert [(await agent.downlink())["sequence"] for _ in range(3)] == sequences[2:]
        later = await assign_task(workspace, agent_id, "later")
        live = await agent.downlink()
        assert live["payload"]["task"]["id"] == later and live["sequence"] > sequences[-1]

    # Another log (epoch) or a position beyond this one: resync, never a silent skip.
    for hello in ({"lastSequence": 3, "epoch": "evt_another_log"}, {"lastSequence": 10_000}):
        async with raw_agent(hub.url, credential) as (agent, _):
            await agent.hello(**hello)
            resync = await agent.frame_of_type("system.resync_required")
            assert resync["payload"]["lastSequence"] >= live["sequence"]
            assert await agent.quiet(2 * INTERVAL) == []
    assert resync["payload"]["reason"] == "ahead_of_log"


async def test_silence_marks_the_agent_offline_then_its_running_task_fails(
    hub: HubProcess, workspace: Workspace
) -> None:
    agent_id, credential = await paired(hub, workspace)

    async def offline() -> bool:
        return (await Agent.get(id=agent_id)).status == AgentStatus.OFFLINE

    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        connected = (await events_after(workspace.id, 0))[-1].sequence
        task_id = await assign_task(workspace, agent_id)
        await agent.frame_of_type("task.assigned")
        assert (await agent.call("task.accepted", {"taskId": task_id}))["type"] == "ack"
        for _ in range(3):  # heartbeats keep it online across several intervals
            await asyncio.sleep(INTERVAL)
            assert (await agent.call("agent.heartbeat"))["type"] == "ack"
        assert (await Agent.get(id=agent_id)).status == AgentStatus.ONLINE
        # Then silence on a socket still open (a peer gone without a word, which no close
        # reports): the heartbeat rule marks the agent offline.
        await eventually(offline)

    # Connection lost, but the task is not failed yet: the grace period runs.
    assert (await Task.get(id=task_id)).status == TaskStatus.RUNNING

    async def failed() -> bool:
        return (await Task.get(id=task_id)).status == TaskStatus.FAILED

    await eventually(failed)
    task = await Task.get(id=task_id)
    assert task.error == "agent_unreachable"
    events = await events_after(workspace.id, connected)
    # Once, by the sweeper: the socket that closed later found the agent offline already.
    (gone,) = [e for e in events if e.type == "agent.offline"]
    assert gone.payload["missedHeartbeats"] == 2 and "reason" not in gone.payload
    assert events[-1].type == "task.status_changed" and events[-1].actor == "system"

    async with raw_agent(hub.url, credential) as (agent, _):
        welcome = await agent.hello()
        assert welcome["payload"]["status"] == "pending"  # never confirmed, but back
        # Asked while the socket is open: closing it marks the agent offline at once.
        assert (await Agent.get(id=agent_id)).status == AgentStatus.ONLINE


async def test_stopping_the_hub_ends_agent_sessions_before_the_database_closes(
    hub: HubProcess, workspace: Workspace
) -> None:
    _, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, socket):
        await agent.hello()
        await asyncio.to_thread(hub.stop)
        with pytest.raises(ConnectionClosed):
            await agent.recv()
    # Hypercorn closes sockets still open when its grace period ends, before the app's
    # shutdown hooks run; the gateway's sessions end then, before the database closes.
    assert socket.close_code is not None
    assert hub.process is not None and hub.process.returncode == 0
    log = hub.log()
    assert "pool is closing" not in log and "ERROR plugins.lap_gateway" not in log


async def test_nothing_an_agent_sent_is_stored_after_its_revocation(
    hub: HubProcess, workspace: Workspace
) -> None:
    """Frames still queued in the hub when the revocation commits are refused, not stored:
    this hub hears of the revocation (made in another process) only a while later."""
    agent_id, credential = await paired(hub, workspace)
    conversation = new_id("conversation")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation, "title": "flood", "agentIds": [agent_id]},
        actor="user:usr_owner",
    )
    acked: list[int] = []
    async with raw_agent(hub.url, credential) as (agent, socket):
        await agent.hello()

        async def read_answers() -> None:
            with contextlib.suppress(ConnectionClosed):
                while True:
                    frame = json.loads(await socket.recv())
                    if frame["type"] == "ack" and "sequence" in frame["payload"]:
                        acked.append(frame["payload"]["sequence"])

        reader = asyncio.create_task(read_answers())
        with contextlib.suppress(ConnectionClosed):
            for n in range(100_000):
                if n == 200:
                    await eventually(lambda: len(acked) >= 50)
                    await revoke_agent(workspace.id, agent_id, by="user:usr_owner")
                await agent.send(
                    "message.create", {"content": f"m{n}"}, conversationId=conversation
                )
                await asyncio.sleep(0)
        await asyncio.wait_for(reader, 10)
    events = await events_after(workspace.id, 0, limit=100_000)
    revoked = next(e.sequence for e in events if e.type == "agent.revoked")
    after = [e for e in events if e.sequence > revoked and e.actor == f"agent:{agent_id}"]
    assert acked and min(acked) < revoked
    assert after == [] and max(acked) < revoked
