"""Size limits: an oversized LAP frame, message, artifact's metadata or API body is refused
with a clear error and stores nothing; the socket stays up for the next frame."""

from __future__ import annotations

from typing import Any

import pytest
from quart import Quart

from hub.core.store.models import Artifact, Event, Workspace
from hub.protocol.lap import MAX_FRAME_BYTES
from tests.core.agent_setup import paired_agent
from tests.plugins.lap_client import RawAgent
from tests.security.conftest import Person

BIG = "x" * 250_000  # past every text field's limit, under the frame's


@pytest.mark.parametrize(
    ("kind", "payload", "code"),
    [
        ("message.create", {"content": BIG}, "invalid_payload"),
        (
            "artifact.created",
            {"name": "n" * 501, "url": "https://example.com/a"},
            "invalid_payload",
        ),
        (
            "artifact.created",
            {"name": "a", "url": "https://e.com/" + "u" * 2001},
            "invalid_payload",
        ),
        (
            "artifact.created",
            {"name": "a", "url": "https://e.com/a", "summary": BIG},
            "invalid_payload",
        ),
        (
            "artifact.created",
            {"name": "a", "url": "https://e.com/a", "mimeType": "m" * 201},
            "invalid_payload",
        ),
        # Past the limit in bytes, under it in characters (hypercorn stops reading frames
        # past it in characters: tests/host/test_websocket_limits.py).
        ("message.create", {"content": "é" * (MAX_FRAME_BYTES // 2)}, "frame_too_large"),
    ],
)
async def test_oversized_uplinks_are_refused_and_store_nothing(
    app: Quart, sign_up, kind: str, payload: dict[str, Any], code: str
) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent, credential = await paired_agent(await Workspace.get(id=me.workspace_id))
    _, conversation = await me.post("/conversations", {"title": "c", "agentIds": [agent.id]})
    headers = {"Authorization": f"Bearer {credential}"}
    async with app.test_client().websocket("/lap/v0.1", headers=headers) as socket:
        raw = RawAgent(socket.send, socket.receive)
        await raw.hello()
        before = await Event.filter(workspace_id=me.workspace_id).count()
        envelope_id = await raw.send(kind, payload, conversationId=conversation["id"])
        answer = await raw.recv(30)
        while answer["type"] not in ("ack", "error"):
            answer = await raw.recv(30)
        assert answer["type"] == "error", answer
        assert answer["payload"]["code"] == code, answer["payload"]
        assert answer["payload"]["hint"]
        assert answer["payload"].get("id") in (envelope_id, None)
        # Still connected: the next, reasonable frame is taken.
        ok = await raw.call(
            "message.create", {"content": "fine"}, conversationId=conversation["id"]
        )
        assert ok["type"] == "ack"
        # Counted while connected: closing the socket logs the agent's going offline.
        assert await Event.filter(workspace_id=me.workspace_id).count() == before + 1
    assert not await Artifact.filter(workspace_id=me.workspace_id).exists()


async def test_an_oversized_message_or_body_on_the_api_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    _, conversation = await me.post("/conversations", {"title": "c", "agentIds": []})
    status, body = await me.post(f"/conversations/{conversation['id']}/messages", {"content": BIG})
    assert status == 422 and body["error"]["hint"], body
    huge = await me.client.post(
        me.url("/conversations"),
        data=b'{"title": "' + b"x" * (17 * 1024 * 1024) + b'"}',
        headers={**me.headers, "Content-Type": "application/json"},
    )
    assert huge.status_code == 413
    _, listed = await me.get("/conversations")
    assert len(listed["conversations"]) == 1


async def test_an_id_longer_than_any_id_in_a_body_is_refused_not_a_500(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    """A schema fuzz run sent an agent id of 43 characters in a new conversation's body:
    the ORM refused to compare it with the id column, and the API answered 500."""
    me: Person = await sign_up()
    status, body = await me.post("/conversations", {"title": "c", "agentIds": ["a" * 43]})
    assert status == 422, body
    assert body["error"]["code"] == "value_does_not_fit" and body["error"]["hint"]
    _, listed = await me.get("/conversations")
    assert listed["conversations"] == []
