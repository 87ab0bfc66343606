"""Tasks, messages, artifacts and resources through MCP, and who may use ``/mcp/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.conftest import eventually
from tests.sdk.live import LiveHub


async def test_a_task_started_through_mcp_is_followed_to_its_end(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        task, _ = await agent.call(
            "start_task", title="Upgrade the database", description="Postgres 15 → 16"
        )
        task_id = task["taskId"]
        assert task["status"] == "running"
        opened = await agent.client.read_resource("lineup://tasks/open")
        assert [t["taskId"] for t in json.loads(opened.contents[0].text)] == [task_id]  # type: ignore[union-attr]

        call = await agent.call_in_background(
            "request_approval", action="Switch traffic to the new server", task_id=task_id
        )
        await eventually(
            lambda: _status_is(hub, task_id, "waiting_for_human"),
        )
        detail = await hub.api("GET", f"/tasks/{task_id}")
        await hub.respond(detail["interactions"][0]["id"], "approve")
        decided, _ = await call
        assert decided["approved"] is True

        await agent.call("report_progress", task_id=task_id, percent=60, summary="Data copied")
        await agent.call(
            "add_artifact", name="Upgrade log", url="https://ci.example/logs/1", task_id=task_id
        )
        await agent.call("finish_task", task_id=task_id, summary="On Postgres 16")
        opened = await agent.client.read_resource("lineup://tasks/open")
        assert json.loads(opened.contents[0].text) == []  # type: ignore[union-attr]

    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert detail["status"] == "succeeded" and detail["summary"] == "On Postgres 16"
    assert [a["name"] for a in detail["artifacts"]] == ["Upgrade log"]


async def test_a_task_a_person_assigned_is_taken_and_answered_in_its_conversation(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        conversation = await hub.conversation(agent.agent_id)
        task_id = await hub.task(agent.agent_id, "Summarise the incident", conversation)

        async def listed() -> bool:
            opened = await agent.client.read_resource("lineup://tasks/open")
            return any(t["taskId"] == task_id for t in json.loads(opened.contents[0].text))  # type: ignore[union-attr]

        await eventually(listed)
        await agent.call("start_task", title="Summarise the incident", task_id=task_id)
        sent, _ = await agent.call(
            "post_message", content="Root cause: a full disk.", task_id=task_id
        )
        assert sent["conversationId"] == conversation

    messages = await hub.api("GET", f"/conversations/{conversation}/messages")
    assert any(m["content"] == "Root cause: a full disk." for m in messages["messages"])
    assert (await hub.api("GET", f"/tasks/{task_id}"))["status"] == "running"


async def test_cancelling_the_task_ends_a_request_waiting_on_it(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        task, _ = await agent.call("start_task", title="Reindex the search cluster")
        task_id = task["taskId"]
        call = await agent.call_in_background(
            "request_approval", action="Drop the old index", task_id=task_id, wait_seconds=120
        )
        await eventually(lambda: _status_is(hub, task_id, "waiting_for_human"))
        await hub.api("POST", f"/tasks/{task_id}/cancel", {"reason": "Wrong cluster"})
        result, _ = await call
        assert result["status"] == "cancelled" and result["reason"] == "Wrong cluster"
        await eventually(lambda: _status_is(hub, task_id, "cancelled"))
        opened = await agent.client.read_resource("lineup://tasks/open")
        assert json.loads(opened.contents[0].text) == []  # type: ignore[union-attr]


async def test_mcp_over_http_refuses_requests_without_a_valid_agent_credential(
    hub: LiveHub,
) -> None:
    async with httpx.AsyncClient(base_url=hub.url, timeout=10) as http:
        bare = await http.post("/mcp/", json={})
        wrong = await http.post("/mcp/", json={}, headers={"Authorization": "Bearer nope"})
    assert bare.status_code == 401 and bare.json()["error"]["code"] == "credential_required"
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_credential"
    # The body was left unread, so the connection ends: said, not left for the client to
    # find out by a request that meets a closed socket.
    assert bare.headers["connection"] == wrong.headers["connection"] == "close"


async def _status_is(hub: LiveHub, task_id: str, status: str) -> bool:
    return bool((await hub.api("GET", f"/tasks/{task_id}"))["status"] == status)
