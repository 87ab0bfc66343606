"""An MCP session opened by hand on the Streamable HTTP wire, for what the official client
cannot be made to do: speak a revision older than its own, or lose a stream on purpose."""

from __future__ import annotations

from typing import Any

import httpx


async def open_session(
    http: httpx.AsyncClient,
    credential: str,
    *,
    revision: str,
    capabilities: dict[str, Any],
    client: str,
) -> dict[str, str]:
    """Initializes a session at ``/mcp/`` as a client of ``revision``; the headers every
    later request of the session carries."""
    headers = {
        "Authorization": f"Bearer {credential}",
        "Accept": "application/json, text/event-stream",
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": capabilities,
            "clientInfo": {"name": client, "version": "1"},
        },
    }
    opened = await http.post("/mcp/", json=initialize, headers=headers)
    assert opened.status_code == 200, opened.text
    session = {
        **headers,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": revision,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post("/mcp/", json=initialized, headers=session)
    return session


def tool_call(name: str, arguments: dict[str, Any], *, request_id: int = 2) -> dict[str, Any]:
    """A ``tools/call`` request of ``name``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
