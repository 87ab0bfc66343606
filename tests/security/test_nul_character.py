"""Text holding NUL (U+0000) is refused at every way in, alike on both databases.

PostgreSQL cannot store it (a schema fuzz run found a token name holding it answered 500
there); SQLite can. Each way in answers ``nul_character`` naming where it was, and stores
nothing; a socket stays up for the next frame.
"""

from __future__ import annotations

import json

from quart import Quart

from hub.core.store.models import ApiToken, Event, Message, Workspace
from tests.core.agent_setup import paired_agent
from tests.plugins.lap_client import RawAgent
from tests.security.conftest import Person


async def test_a_json_body_holding_nul_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    tokens = await ApiToken.all().count()
    response = await me.client.post(
        "/api/v1/auth/tokens", json={"name": "ci\x00bot"}, headers=me.headers
    )
    body = await response.get_json()
    assert response.status_code == 422, body
    assert body["error"]["code"] == "nul_character" and body["error"]["hint"]
    assert body["error"]["details"]["field"] == "name"
    assert await ApiToken.all().count() == tokens

    _, conversation = await me.post("/conversations", {"title": "c", "agentIds": []})
    status, body = await me.post(
        f"/conversations/{conversation['id']}/messages",
        {"content": "ok", "attachments": [{"name": "a\x00"}]},
    )
    assert status == 422 and body["error"]["details"]["field"] == "attachments[0].name"
    assert not await Message.filter(conversation_id=conversation["id"]).exists()


async def test_a_query_string_or_form_holding_nul_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    status, body = await me.get("/tasks?status=running%00")
    assert status == 422 and body["error"]["code"] == "nul_character", body
    response = await app.test_client().post(
        "/login", form={"email": "someone@example.com\x00", "password": "x"}
    )
    assert response.status_code == 422  # the pages' own error page, naming the code
    assert "nul_character" in await response.get_data(as_text=True)


async def test_a_lap_frame_holding_nul_is_refused_and_the_socket_stays(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent, credential = await paired_agent(await Workspace.get(id=me.workspace_id))
    _, conversation = await me.post("/conversations", {"title": "c", "agentIds": [agent.id]})
    headers = {"Authorization": f"Bearer {credential}"}
    async with app.test_client().websocket("/lap/v0.1", headers=headers) as socket:
        raw = RawAgent(socket.send, socket.receive)
        await raw.hello()
        before = await Event.filter(workspace_id=me.workspace_id).count()
        refused = await raw.call(
            "message.create", {"content": "a\x00b"}, conversationId=conversation["id"]
        )
        assert refused["type"] == "error"
        assert refused["payload"]["code"] == "nul_character"
        assert refused["payload"]["details"]["field"] == "payload.content"
        ok = await raw.call("message.create", {"content": "ab"}, conversationId=conversation["id"])
        assert ok["type"] == "ack"
        # Counted while connected: closing the socket logs the agent's going offline.
        assert await Event.filter(workspace_id=me.workspace_id).count() == before + 1


async def test_a_client_command_holding_nul_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    path = f"/ws/client?workspace={me.workspace_id}"
    async with app.test_client().websocket(path, headers=me.headers) as socket:
        assert json.loads(await socket.receive())["type"] == "client.welcome"
        await socket.send(
            json.dumps({"id": "c1", "type": "interaction.respond", "payload": {"x": "\x00"}})
        )
        answer = json.loads(await socket.receive())
        while answer["type"] != "error":  # the log's events come first
            answer = json.loads(await socket.receive())
        assert answer["payload"]["code"] == "nul_character"
