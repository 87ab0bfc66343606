"""The user-side frames of spec §10.1 on /ws/client: acked, idempotent, refused with reasons."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from hub.core.store.models import Membership, Role, Workspace
from hub.core.work.conversations import create_conversation
from hub.protocol.actions import ProposedAction
from tests.core.scenario import make_agent
from tests.web.api.conftest import Person


async def until(socket: Any, type: str) -> dict[str, Any]:
    """The next frame of ``type``, skipping the event frames in between."""

    async def read() -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(await socket.receive())
            if frame["type"] == type:
                return frame

    return await asyncio.wait_for(read(), timeout=10)


async def send(socket: Any, type: str, payload: dict[str, Any], **envelope: Any) -> str:
    envelope_id = envelope.pop("id", None) or new_id("event")
    await socket.send(json.dumps({"id": envelope_id, "type": type, "payload": payload, **envelope}))
    return envelope_id


def path(person: Person) -> str:
    return f"/ws/client?workspace={person.workspace_id}"


async def test_create_and_answer_over_the_socket(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("sam")
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    conversation = await create_conversation(me.workspace_id, "Chat", [agent.id], by="user:x")
    async with me.client.websocket(path(me), headers=me.headers) as socket:
        sent = await send(
            socket,
            "message.create",
            {"content": "Tidy up", "trackAsTask": True},
            conversationId=conversation.id,
        )
        ack = (await until(socket, "ack"))["payload"]
        assert ack["id"] == sent and ack["duplicate"] is False
        task = ack["result"]["task"]
        assert task["status"] == "queued" and ack["result"]["message"]["taskId"] == task["id"]
        assert ack["sequence"] == await last_sequence(me.workspace_id)

        await send(socket, "task.create", {"title": "Plan", "targetAgentId": agent.id})
        planned = (await until(socket, "ack"))["payload"]["result"]
        assert planned["title"] == "Plan" and planned["targetAgentId"] == agent.id

        by_agent = f"agent:{agent.id}"
        await append_event(me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent)
        interaction_id = new_id("interaction")
        await append_event(
            me.workspace_id,
            "interaction.requested",
            {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
            actor=by_agent,
            task_id=task["id"],
        )
        answer = await send(
            socket,
            "interaction.respond",
            {"interactionId": interaction_id, "response": {"optionId": "approve"}},
        )
        resolved = (await until(socket, "ack"))["payload"]
        assert resolved["id"] == answer and resolved["result"]["status"] == "resolved"
        assert resolved["result"]["via"] == "api" and resolved["result"]["respondedByName"] == "sam"

        await send(
            socket,
            "interaction.respond",
            {"interactionId": interaction_id, "response": {"optionId": "reject"}},
        )
        late = (await until(socket, "error"))["payload"]
        assert late["code"] == "already_decided" and late["details"]["via"] == "api"

        await send(socket, "task.cancel_requested", {"reason": "enough"}, taskId=task["id"])
        cancelled = (await until(socket, "ack"))["payload"]["result"]
        assert cancelled["cancelRequested"] is True and cancelled["status"] == "running"


async def test_a_repeated_frame_id_acts_once(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    async with me.client.websocket(path(me), headers=me.headers) as socket:
        body = {"title": "Once", "targetAgentId": agent.id}
        await send(socket, "task.create", body, id="frame-1")
        first = (await until(socket, "ack"))["payload"]
        await send(socket, "task.create", body, id="frame-1")
        again = (await until(socket, "ack"))["payload"]
    assert first["duplicate"] is False and again["duplicate"] is True
    assert again["sequence"] == first["sequence"]
    assert again["result"]["id"] == first["result"]["id"]
    assert await last_sequence(me.workspace_id) == me.log_start + 1


async def test_bad_frames_are_answered_and_the_socket_stays(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    stranger: Person = await sign_up()
    theirs = await make_agent(await Workspace.get(id=stranger.workspace_id))
    async with me.client.websocket(path(me), headers=me.headers) as socket:
        cases: list[tuple[str, str]] = [
            ("{not json", "malformed_json"),
            ("[1]", "invalid_envelope"),
            (json.dumps({"type": "task.create", "payload": {}}), "invalid_envelope"),
            (json.dumps({"id": "a", "type": "agent.hello", "payload": {}}), "unknown_type"),
            (json.dumps({"id": "b", "type": "task.create", "payload": {}}), "invalid_payload"),
            (
                json.dumps(
                    {
                        "id": "c",
                        "type": "task.create",
                        "workspaceId": stranger.workspace_id,
                        "payload": {"title": "t", "targetAgentId": theirs.id},
                    }
                ),
                "workspace_mismatch",
            ),
            (
                json.dumps(
                    {
                        "id": "d",
                        "type": "task.create",
                        "payload": {"title": "t", "targetAgentId": theirs.id},
                    }
                ),
                "agent_not_found",
            ),
            ("é" * 500_001, "frame_too_large"),  # over a million bytes, half as many characters
        ]
        for raw, code in cases:
            await socket.send(raw)
            error = (await until(socket, "error"))["payload"]
            assert error["code"] == code, raw[:80]
            assert error["message"] and error["hint"]
        # Still open, still answering.
        await send(socket, "task.cancel_requested", {"taskId": "task_nope"})
        assert (await until(socket, "error"))["payload"]["code"] == "task_not_found"
    assert await last_sequence(me.workspace_id) == me.log_start
    assert await last_sequence(stranger.workspace_id) == stranger.log_start


async def test_a_viewer_cannot_act_over_the_socket(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up()
    viewer: Person = await sign_up()
    agent = await make_agent(await Workspace.get(id=owner.workspace_id))
    await Membership.create(
        id=new_id("membership"),
        workspace_id=owner.workspace_id,
        user_id=viewer.user_id,
        role=Role.VIEWER,
    )
    interaction = new_id("interaction")
    await append_event(
        owner.workspace_id,
        "interaction.requested",
        {"interaction": {"id": interaction, "type": "approval", "title": "ok?"}},
        actor=f"agent:{agent.id}",
    )
    before = await last_sequence(owner.workspace_id)
    async with viewer.client.websocket(path(owner), headers=viewer.headers) as socket:
        await send(socket, "task.create", {"title": "t", "targetAgentId": agent.id})
        assert (await until(socket, "error"))["payload"]["code"] == "read_only_member"
        answer = {"interactionId": interaction, "response": {"optionId": "approve"}}
        await send(socket, "interaction.respond", answer)
        assert (await until(socket, "error"))["payload"]["code"] == "not_allowed_to_answer"
    assert await last_sequence(owner.workspace_id) == before


async def test_a_card_of_an_exact_action_is_answered_over_the_socket(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("sam")
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    proposed = ProposedAction(
        kind="shell.command", fields={"command": "rm -rf build"}, editable=["command"]
    )
    interaction_id = new_id("interaction")
    card = {"id": interaction_id, "type": "approval", "title": "Run it?", "action": proposed.wire()}
    await append_event(
        me.workspace_id,
        "interaction.requested",
        {"interaction": card},
        actor=f"agent:{agent.id}",
    )
    async with me.client.websocket(path(me), headers=me.headers) as socket:
        await send(
            socket,
            "interaction.respond",
            {
                "interactionId": interaction_id,
                "response": {
                    "optionId": "approve",
                    "actionHash": proposed.hash,
                    "action": {"command": "rm -rf build/tmp"},
                },
            },
        )
        resolved = (await until(socket, "ack"))["payload"]["result"]
    assert resolved["status"] == "resolved"
    assert resolved["response"]["action"]["fields"] == {"command": "rm -rf build/tmp"}
    assert resolved["response"]["editedFrom"] == proposed.hash
