"""The WebSocket half of the isolation matrix.

``/lap/v0.1``: an agent of one workspace naming another workspace, its conversation or its
task is refused with an error frame and writes nothing there. ``/ws/client``: no token, a
bad token or another workspace's token never streams a single event (the refusals by code
are in tests/web/api/test_client_socket.py; here, nothing leaks either).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from quart import Quart

from hub.core.log.events import append_event
from hub.core.store.models import Event, Workspace
from tests.core.agent_setup import paired_agent
from tests.plugins.lap_client import RawAgent
from tests.security.conftest import Person


async def refused_uplinks(app: Quart, credential: str, frames: list[dict[str, Any]]) -> list[str]:
    headers = {"Authorization": f"Bearer {credential}"}
    codes = []
    async with app.test_client().websocket("/lap/v0.1", headers=headers) as socket:
        agent = RawAgent(socket.send, socket.receive)
        await agent.hello()
        for frame in frames:
            answer = await agent.call(frame["type"], frame.get("payload"), **frame["fields"])
            assert answer["type"] == "error", (frame, answer)
            codes.append(answer["payload"]["code"])
    return codes


async def test_an_agent_cannot_touch_another_workspace(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    mine: Person = await sign_up("mine")
    theirs: Person = await sign_up("theirs")
    _, credential = await paired_agent(await Workspace.get(id=mine.workspace_id))
    their_agent, _ = await paired_agent(await Workspace.get(id=theirs.workspace_id))
    _, conversation = await theirs.post(
        "/conversations", {"title": "private", "agentIds": [their_agent.id]}
    )
    status, task = await theirs.post(
        "/tasks", {"title": "private", "description": "", "targetAgentId": their_agent.id}
    )
    assert status == 201, task
    before = await Event.filter(workspace_id=theirs.workspace_id).count()
    message = {"content": "hello from elsewhere"}
    codes = await refused_uplinks(
        app,
        credential,
        [
            {
                "type": "message.create",
                "payload": message,
                "fields": {"workspaceId": theirs.workspace_id},
            },
            {
                "type": "message.create",
                "payload": message,
                "fields": {"conversationId": conversation["id"]},
            },
            {"type": "task.accepted", "fields": {"taskId": task["id"]}},
            {
                "type": "task.status_changed",
                "payload": {"status": "succeeded"},
                "fields": {"taskId": task["id"]},
            },
            {
                "type": "interaction.requested",
                "payload": {"interaction": {"type": "approval", "title": "let me in"}},
                "fields": {"taskId": task["id"]},
            },
            {
                "type": "artifact.created",
                "payload": {"name": "x", "url": "https://example.com/x"},
                "fields": {"taskId": task["id"]},
            },
        ],
    )
    # Another workspace's ids read as unknown: an agent cannot even probe that they exist.
    assert codes == ["workspace_mismatch", "conversation_not_found"] + ["task_not_found"] * 4
    assert await Event.filter(workspace_id=theirs.workspace_id).count() == before


@pytest.mark.parametrize("who", ["nobody", "bad token", "stranger"])
async def test_the_client_socket_leaks_nothing_to_outsiders(app: Quart, sign_up, who: str) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up("owner")
    stranger: Person = await sign_up("stranger")
    await append_event(owner.workspace_id, "note.added", {"secret": "owner only"}, actor="system")
    headers = {
        "nobody": {},
        "bad token": {"Authorization": "Bearer lut_not_a_token"},
        "stranger": stranger.headers,
    }[who]
    path = f"/ws/client?workspace={owner.workspace_id}&after=0"
    async with app.test_client().websocket(path, headers=headers) as socket:
        frames = []
        try:
            async with asyncio.timeout(3):
                while True:
                    frames.append(json.loads(await socket.receive()))
        except Exception:  # closed or quiet: either way, what came is checked below
            pass
    assert frames and all(frame["type"] == "error" for frame in frames), frames
    assert "owner only" not in json.dumps(frames)
