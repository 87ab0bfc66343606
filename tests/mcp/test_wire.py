"""What the hub's MCP server says about itself and how it refuses, as MCP clients see it.

The official client against a live hub's ``/mcp/``, on the 2025-11-25 handshake
(``mode="legacy"``) and on 2026-07-28 (``server/discover``): the same capabilities both ways,
the hub's version, protocol errors for what does not exist, output schemas a model can read,
and ``Origin`` checked before anything else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from tests.mcp.conftest import http_agent, paired_credential
from tests.mcp.test_decisions import waiting_card
from tests.sdk.live import LiveHub


@pytest.fixture
async def credential(hub: LiveHub, tmp_path: Path) -> str:
    return await paired_credential(hub, tmp_path / "agent")


async def test_both_revisions_get_the_same_capabilities_and_the_hub_s_version(
    hub: LiveHub, credential: str
) -> None:
    """Extensions (the tasks extension) exist on the 2026-07-28 wire alone: the handshake's
    schema has no place for them, and tasks are served on 2026-07-28 alone."""
    async with http_agent(hub, credential, mode="legacy") as handshake:
        initialized = handshake.client.session.initialize_result
        assert initialized is not None and handshake.client.protocol_version == "2025-11-25"
        claimed_by_handshake = initialized.capabilities.model_dump(by_alias=True)
        handshake_info = handshake.client.server_info
    async with http_agent(hub, credential) as modern:
        assert modern.client.protocol_version == "2026-07-28"
        claimed_by_discover = modern.client.server_capabilities.model_dump(by_alias=True)
        modern_info = modern.client.server_info

    extensions = claimed_by_discover.pop("extensions")
    assert extensions == {"io.modelcontextprotocol/tasks": {}}
    assert claimed_by_handshake.pop("extensions") is None
    assert claimed_by_discover == claimed_by_handshake
    assert claimed_by_handshake["tools"] == {"listChanged": False}
    assert handshake_info.version == modern_info.version == version("lineup-hub") != ""


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_prompt_or_tool_is_invalid_params(
    hub: LiveHub, credential: str, mode: str
) -> None:
    async with http_agent(hub, credential, mode=mode) as agent:
        with pytest.raises(MCPError) as prompt:
            await agent.client.get_prompt("no_such_prompt")
        with pytest.raises(MCPError) as tool:
            await agent.client.call_tool("no_such_tool", {})
    assert prompt.value.code == tool.value.code == INVALID_PARAMS
    assert prompt.value.message == "Unknown prompt: no_such_prompt"
    assert tool.value.message == "Unknown tool: no_such_tool"
    assert "Traceback" not in hub.process.log()


async def test_get_decision_refuses_a_handle_no_request_of_this_agent_has(
    hub: LiveHub, credential: str
) -> None:
    async with http_agent(hub, credential) as agent:
        refused = await agent.client.call_tool("get_decision", {"handle": "int_0123456789"})
        asked, _ = await agent.call(
            "request_approval", action="Rotate the API keys", wait_seconds=0
        )
        typo = asked["handle"][:-1] + ("0" if asked["handle"][-1] != "0" else "1")
        mistyped = await agent.client.call_tool("get_decision", {"handle": typo})
        again, _ = await agent.call("get_decision", handle=asked["handle"], wait_seconds=0)

    for result in (refused, mistyped):
        assert result.is_error and result.structured_content is None
        assert "unknown_handle" in result.content[0].text  # type: ignore[union-attr]
    assert asked["status"] == again["status"] == "pending"


async def test_every_tool_publishes_its_output_schema_and_describes_every_property(
    hub: LiveHub, credential: str
) -> None:
    async with http_agent(hub, credential) as agent:
        tools = (await agent.client.list_tools()).tools

    assert len(tools) == 11
    undescribed: list[str] = []
    for tool in tools:
        assert tool.description and tool.output_schema is not None, tool.name
        assert tool.output_schema.get("properties"), f"{tool.name}: no output properties"
        for where, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            undescribed += [f"{tool.name} {where} {p}" for p in _undescribed(schema)]
    assert undescribed == []


def _undescribed(schema: dict[str, Any]) -> list[str]:
    """Every property, in the schema and its definitions, that has no description."""
    found: list[str] = []
    objects = [("", schema), *[(f"{name}.", d) for name, d in schema.get("$defs", {}).items()]]
    for prefix, node in objects:
        for name, prop in (node.get("properties") or {}).items():
            if not prop.get("description"):
                found.append(prefix + name)
    return found


async def test_a_page_of_another_origin_is_refused_before_the_credential_is_looked_at(
    hub: LiveHub, credential: str
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {
        "Authorization": f"Bearer {credential}",
        "Accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient(base_url=hub.url, timeout=10) as http:
        foreign = await http.post(
            "/mcp/", json=body, headers={**headers, "Origin": "http://evil.example.com"}
        )
        rebinding = await http.post(
            "/mcp/",
            json=body,
            headers={**headers, "Origin": "http://evil.example.com", "Host": "evil.example.com"},
        )
        nameless = await http.post(
            "/mcp/", json=body, headers={"Origin": "null", "Accept": headers["Accept"]}
        )
        own = await http.post("/mcp/", json=body, headers={**headers, "Origin": hub.url})
        allowed = await http.post(
            "/mcp/", json=body, headers={**headers, "Origin": "http://localhost:6274"}
        )

    for refused in (foreign, rebinding, nameless):
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "origin_not_allowed"
    # The hub's own origin and a configured one reach MCP (which then wants a session).
    assert own.status_code != 403 and allowed.status_code != 403


async def test_a_dropped_stream_is_resumed_with_the_answer_it_missed(
    hub: LiveHub, credential: str
) -> None:
    """The connection of a waiting call drops (a proxy's timeout, say); the person answers;
    the client reconnects with ``Last-Event-ID`` and gets the tool's result it missed.

    Plain HTTP, as the transport specifies it: the official client resumes on its own
    when a stream breaks, which a test cannot provoke in it."""
    headers = {
        "Authorization": f"Bearer {credential}",
        "Accept": "application/json, text/event-stream",
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "resuming-client", "version": "1"},
        },
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "request_approval", "arguments": {"action": "Purge the old logs"}},
    }
    async with httpx.AsyncClient(base_url=hub.url, timeout=30) as http:
        opened = await http.post("/mcp/", json=initialize, headers=headers)
        session = {
            **headers,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post("/mcp/", json=initialized, headers=session)
        async with http.stream("POST", "/mcp/", json=call, headers=session) as stream:
            priming = await anext(_events(stream))
        assert priming["id"] and priming["data"] == ""  # then the connection is gone

        card = await waiting_card(hub, "Purge the old logs")
        await hub.respond(card["id"], "approve")
        resumed = {**session, "last-event-id": priming["id"]}
        async with http.stream("GET", "/mcp/", headers=resumed) as stream:
            async for event in _events(stream):
                if event["data"] and json.loads(event["data"]).get("id") == 2:
                    answer = json.loads(event["data"])
                    break
    assert answer["result"]["structuredContent"]["approved"] is True


async def _events(stream: httpx.Response) -> AsyncIterator[dict[str, str]]:
    """The server-sent events of ``stream``: ``id`` and ``data`` of each."""
    event: dict[str, str] = {"id": "", "data": ""}
    async for line in stream.aiter_lines():
        if not line:
            if event["id"] or event["data"]:
                yield event
            event = {"id": "", "data": ""}
        elif line.startswith("id:"):
            event["id"] = line[3:].strip()
        elif line.startswith("data:"):
            event["data"] += line[5:].strip()
