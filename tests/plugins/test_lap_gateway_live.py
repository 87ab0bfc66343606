"""The LAP gateway inside the app, through Quart's test client: the live paths.

Here the person's side appends in the same process as the sockets, so events travel the bus
(no periodic log check involved): live delivery order, streaming, revocation via the bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from quart.testing.connections import WebsocketDisconnectError, WebsocketResponseError
from quart.typing import TestAppProtocol as QuartTestApp

from hub.config import load_settings
from hub.core.agents.registry import revoke_agent
from hub.core.ids import new_id
from hub.core.log.bus import DEFAULT_BUS
from hub.core.log.events import append_event, events_after
from hub.core.people.accounts import create_user
from hub.core.store.models import Artifact, Interaction, InteractionStatus, Message, Task, Workspace
from hub.core.task_states import TaskStatus
from hub.host.app import create_app
from tests.core.agent_setup import SECRET_KEY, paired_agent
from tests.plugins.lap_client import RawAgent

INTERVAL = 0.5


@pytest.fixture
async def app(database_url: str, tmp_path: Path) -> AsyncIterator[QuartTestApp]:
    settings = load_settings(
        database_url=database_url,
        secret_key=SECRET_KEY,
        data_dir=tmp_path,
        heartbeat_interval_s=INTERVAL,
    )
    async with create_app(settings).test_app() as test_app:
        yield test_app


@pytest.fixture
async def workspace(app: QuartTestApp) -> Workspace:
    _, workspace = await create_user("owner@example.com", "correct horse", "Owner")
    return workspace


@asynccontextmanager
async def connected(app: QuartTestApp, credential: str, **hello: Any) -> AsyncIterator[RawAgent]:
    headers = {"Authorization": f"Bearer {credential}"}
    async with app.test_client().websocket("/lap/v0.1", headers=headers) as socket:
        agent = RawAgent(socket.send, socket.receive)
        await agent.hello(**hello)
        yield agent


async def assign_task(workspace: Workspace, agent_id: str, title: str = "a task") -> str:
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": title, "targetAgentId": agent_id},
        actor="user:usr_owner",
    )
    return task_id


async def test_live_downlinks_arrive_in_log_order_once_under_concurrent_appends(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    async with connected(app, credential) as raw:
        task_ids = await asyncio.gather(
            *(assign_task(workspace, agent.id, f"task {n}") for n in range(30))
        )
        frames = [await raw.downlink() for _ in range(30)]
        assert await raw.quiet(2 * INTERVAL) == []
    sequences = [f["sequence"] for f in frames]
    assert sequences == sorted(set(sequences))
    assert {f["payload"]["task"]["id"] for f in frames} == set(task_ids)
    stored = {
        e.sequence: e.payload["taskId"]
        for e in await events_after(workspace.id, 0)
        if e.type == "task.created"
    }
    assert [f["payload"]["task"]["id"] for f in frames] == [stored[s] for s in sequences]


async def test_the_spec_interaction_example_is_accepted_and_the_answer_comes_back(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    conversation_id, interaction_id = new_id("conversation"), new_id("interaction")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation_id, "title": "DB", "agentIds": [agent.id]},
        actor="user:usr_owner",
    )
    async with connected(app, credential) as raw:
        task_id = await assign_task(workspace, agent.id, "migrate")
        assigned = await raw.downlink()
        assert (assigned["type"], assigned["taskId"]) == ("task.assigned", task_id)
        assert (await raw.call("task.accepted", {"taskId": task_id}))["type"] == "ack"
        # Spec §10.4, as written, with real ids.
        example = {
            "interaction": {
                "id": interaction_id,
                "type": "approval",
                "title": "允许执行数据库迁移吗？",
                "description": "此操作会在 production 执行 3 个已审阅的迁移文件。",
                "risk": "high",
                "options": [
                    {"id": "approve", "label": "允许执行", "style": "primary"},
                    {"id": "reject", "label": "拒绝", "style": "danger"},
                ],
                "details": {"migrationCount": 3, "environment": "production"},
                "expiresAt": "2099-07-25T12:00:00Z",
            }
        }
        ack = await raw.call(
            "interaction.requested",
            example,
            id=new_id("event"),
            occurredAt="2026-07-24T12:00:00Z",
            workspaceId=workspace.id,
            conversationId=conversation_id,
            taskId=task_id,
        )
        assert ack["type"] == "ack" and ack["payload"]["interactionId"] == interaction_id
        assert (await Task.get(id=task_id)).status == TaskStatus.WAITING_FOR_HUMAN
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.PENDING and interaction.agent_id == agent.id

        await append_event(
            workspace.id,
            "interaction.resolved",
            {
                "interactionId": interaction_id,
                "response": {"optionId": "approve", "comment": "go"},
                "respondedBy": "user:usr_owner",
                "via": "telegram",
            },
            actor="user:usr_owner",
        )
        resolved = await raw.downlink()
    assert resolved["type"] == "interaction.resolved"
    payload = resolved["payload"]
    assert payload["interactionId"] == interaction_id
    assert payload["response"] == {"optionId": "approve", "comment": "go"}
    assert (payload["respondedBy"], payload["via"]) == ("user:usr_owner", "telegram")
    assert payload["respondedAt"]
    assert (await Task.get(id=task_id)).status == TaskStatus.RUNNING


async def test_streamed_text_is_shown_live_and_stored_whole_at_the_end(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    conversation_id, message_id = new_id("conversation"), new_id("message")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation_id, "title": "chat", "agentIds": [agent.id]},
        actor="user:usr_owner",
    )
    pieces = ["Scanning ", "the repo", "… done."]
    with DEFAULT_BUS.subscribe(workspace.id, accepts=lambda e: e.type == "message.delta") as live:
        async with connected(app, credential) as raw:
            for piece in pieces:
                ack = await raw.call(
                    "message.delta",
                    {"messageId": message_id, "delta": piece},
                    conversationId=conversation_id,
                )
                assert ack["type"] == "ack" and "sequence" not in ack["payload"]
            final = await raw.call(
                "message.create",
                {"messageId": message_id, "content": "".join(pieces)},
                conversationId=conversation_id,
            )
        deltas = [live.get_nowait() for _ in pieces]
    assert [d.envelope["payload"]["delta"] for d in deltas if d] == pieces
    assert {d.type for d in deltas if d} == {"message.delta"}
    assert final["payload"]["messageId"] == message_id
    message = await Message.get(id=message_id)
    assert message.content == "Scanning the repo… done." and message.author == f"agent:{agent.id}"
    types = [e.type for e in await events_after(workspace.id, 0)]
    assert "message.delta" not in types and types.count("message.created") == 1


async def test_ids_left_out_are_generated_and_named_in_the_ack(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    async with connected(app, credential) as raw:
        task_id = await assign_task(workspace, agent.id)
        await raw.downlink()
        await raw.call("task.accepted", {}, taskId=task_id)
        child = await raw.call(
            "task.child_created", {"parentTaskId": task_id, "title": "scan", "status": "running"}
        )
        artifact = await raw.call(
            "artifact.created",
            {"name": "plan.md", "url": "https://example.com/plan.md"},
            taskId=task_id,
        )
        card = await raw.call(
            "interaction.requested",
            {"interaction": {"type": "input", "title": "Staging URL?", "input": {"format": "url"}}},
            taskId=task_id,
        )
        orphan = await raw.call("message.create", {"content": "to whom?"})
    child_task = await Task.get(id=child["payload"]["taskId"])
    assert child_task.parent_id == task_id and child_task.status == TaskStatus.RUNNING
    assert (await Artifact.get(id=artifact["payload"]["artifactId"])).task_id == task_id
    assert (await Interaction.get(id=card["payload"]["interactionId"])).type == "input"
    assert (orphan["type"], orphan["payload"]["code"]) == ("error", "conversation_required")


async def test_the_first_frame_must_be_a_hello_and_only_one_is_taken(
    app: QuartTestApp, workspace: Workspace
) -> None:
    _, credential = await paired_agent(workspace)
    headers = {"Authorization": f"Bearer {credential}"}
    async with app.test_client().websocket("/lap/v0.1", headers=headers) as socket:
        raw = RawAgent(socket.send, socket.receive)
        early = await raw.call("agent.heartbeat")
        assert (early["type"], early["payload"]["code"]) == ("error", "hello_required")
        await raw.hello()
        again = await raw.call("agent.hello", {})
        assert again["payload"]["code"] == "already_greeted"
        assert (await raw.call("agent.heartbeat"))["type"] == "ack"


async def test_revoking_closes_the_live_socket_within_a_second(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    async with connected(app, credential) as raw:
        await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
        error = await raw.frame_of_type("error", within=1.0)
        with pytest.raises(WebsocketDisconnectError) as closed:
            await raw.recv(within=1.0)
    assert error["payload"]["code"] == "credential_revoked"
    assert closed.value.args[0] == 4401
    with pytest.raises(WebsocketResponseError) as refused:
        async with connected(app, credential):
            pass
    assert refused.value.response.status_code == 401


async def test_a_second_socket_of_the_same_agent_replaces_the_first(
    app: QuartTestApp, workspace: Workspace
) -> None:
    agent, credential = await paired_agent(workspace)
    async with connected(app, credential) as first, connected(app, credential) as second:
        replaced = await first.frame_of_type("error")
        with pytest.raises(WebsocketDisconnectError) as closed:
            await first.recv()
        task_id = await assign_task(workspace, agent.id)
        assert (await second.downlink())["payload"]["task"]["id"] == task_id
    assert replaced["payload"]["code"] == "connection_replaced"
    assert closed.value.args[0] == 4409


async def test_frames_in_flight_share_commits_and_are_answered_in_order(
    app: QuartTestApp, workspace: Workspace
) -> None:
    """An agent that does not wait for each ack: its events keep its order (a task it
    creates, then reports on, in the same burst), and its frames share commits."""
    from hub.core.log.events import LOG_WRITES

    agent, credential = await paired_agent(workspace)
    conversation_id = new_id("conversation")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation_id, "title": "burst", "agentIds": [agent.id]},
        actor="user:usr_owner",
    )
    batches_before = LOG_WRITES.batches_written
    published = DEFAULT_BUS.subscribe(workspace.id)
    async with connected(app, credential) as raw:
        sent = []
        task_id = new_id("task")
        sent.append(await raw.send("task.created", {"taskId": task_id, "title": "burst"}))
        sent.append(await raw.send("task.accepted", {"taskId": task_id}))
        for n in range(60):
            sent.append(
                await raw.send(
                    "message.create", {"conversationId": conversation_id, "content": f"{n}"}
                )
            )
            if n == 30:
                delta = {"messageId": "streaming", "conversationId": conversation_id, "delta": "…"}
                sent.append(await raw.send("message.delta", delta))
                sent.append(await raw.send("agent.heartbeat", {}))
                sent.append(await raw.send("message.create", {"content": "no conversation"}))
        sent.append(
            await raw.send("task.status_changed", {"taskId": task_id, "status": "succeeded"})
        )
        answers = []
        async with asyncio.timeout(20):
            while len(answers) < len(sent):
                frame = await raw.recv(20)
                if frame["type"] in ("ack", "error"):
                    answers.append(frame)
    assert [a["payload"]["id"] for a in answers] == sent
    refused = [a for a in answers if a["type"] == "error"]
    assert [r["payload"]["code"] for r in refused] == ["conversation_required"]
    sequences = [a["payload"]["sequence"] for a in answers if "sequence" in a["payload"]]
    assert sequences == sorted(sequences)  # the log holds them in the order they were sent
    assert (await Task.get(id=task_id)).status == TaskStatus.SUCCEEDED
    assert await Message.filter(conversation_id=conversation_id).count() == 60
    assert LOG_WRITES.batches_written - batches_before < 60
    # Live text keeps its place too: after the messages sent before it, before the next.
    order = []
    while (event := published.get_nowait()) is not None:
        if event.type in ("message.created", "message.delta"):
            order.append(event.envelope["payload"].get("content", "delta"))
    published.close()
    assert order.index("delta") == order.index("30") + 1


async def test_a_plain_get_answers_what_the_upgrade_would_have(
    app: QuartTestApp, workspace: Workspace
) -> None:
    """The standard WebSocket API hides a refused upgrade's status; the same path and
    credential over a plain GET tell the client why (docs/protocol.md, "With a credential")."""
    client = app.test_client()
    agent, credential = await paired_agent(workspace)
    taken = await client.get("/lap/v0.1", headers={"Authorization": f"Bearer {credential}"})
    assert taken.status_code == 426
    assert (await taken.get_json())["error"]["code"] == "upgrade_required"
    assert (await client.get("/lap/v0.1")).status_code == 426  # no credential: pairing
    unknown = await client.get("/lap/v0.1", headers={"Authorization": "Bearer lu_agt_nope"})
    assert unknown.status_code == 401
    assert (await unknown.get_json())["error"]["code"] == "invalid_credential"
    malformed = await client.get("/lap/v0.1", headers={"Authorization": "Basic x"})
    assert (await malformed.get_json())["error"]["code"] == "invalid_authorization"
    await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    revoked = await client.get("/lap/v0.1", headers={"Authorization": f"Bearer {credential}"})
    body = (await revoked.get_json())["error"]
    assert revoked.status_code == 401 and body["code"] == "credential_revoked" and body["hint"]
