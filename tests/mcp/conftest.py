"""A live hub with Telegram on a local Bot API server, and the official MCP client on it.

The hub runs as ``lineup serve`` in its own process; the MCP server is either ``lineup mcp``
started by the client over stdio, or the hub's own ``/mcp/`` over streamable HTTP. The
person answers through the JSON API (what the web UI calls) or by pressing Telegram buttons.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_api_token, create_user
from hub.testing import HubProcess, eventually
from tests.channels.peers import BotApiPeer
from tests.sdk.live import HEARTBEAT_INTERVAL_S, LiveHub

ADA = 4242  # the owner's Telegram user id


@dataclass
class Progress:
    """The progress notifications one tool call received."""

    seen: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))


@dataclass
class McpAgent:
    """The MCP client connected to the hub as one agent, and the hub it is connected to."""

    client: Client
    hub: LiveHub
    agent_id: str

    async def call(self, tool: str, **arguments: Any) -> tuple[dict[str, Any], Progress]:
        progress = Progress()
        result: CallToolResult = await self.client.call_tool(
            tool, arguments, progress_callback=progress
        )
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content, progress

    async def call_in_background(self, tool: str, **arguments: Any) -> asyncio.Task[Any]:
        return asyncio.create_task(self.call(tool, **arguments))


@contextlib.asynccontextmanager
async def live_hub(database_url: str, data_dir: Path, **env: str) -> AsyncIterator[LiveHub]:
    """A hub process with one person, started off the event loop: the hub talks to peers
    (the Bot API server) served by this loop while it starts."""
    user, workspace = await create_user("owner@example.com", "correct horse", "Owner")
    _, token = await create_api_token(user, "tests")
    settings = {"LINEUP_HEARTBEAT_INTERVAL_S": str(HEARTBEAT_INTERVAL_S), **env}
    process = HubProcess(database_url, data_dir, **settings)
    await asyncio.to_thread(process.start)
    try:
        async with httpx.AsyncClient(
            base_url=process.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as http:
            yield LiveHub(process, workspace.id, user.id, http)
    finally:
        await asyncio.to_thread(process.stop)


@pytest.fixture
async def hub(db: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[LiveHub]:
    async with live_hub(
        db,
        tmp_path / "hub",
        LINEUP_TELEGRAM_BOT_TOKEN=bot_api.token,
        LINEUP_TELEGRAM_API_URL=bot_api.url,
        LINEUP_MCP_IDLE_S="30",
        LINEUP_MCP_ALLOWED_ORIGINS="http://localhost:6274",
    ) as running:
        token, _ = await create_link_token(running.user_id, "telegram")
        bot_api.send_text(ADA, f"/start {token}")
        await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
        yield running


def _client_env(tmp_path: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LINEUP_DATA_DIR": str(tmp_path / "client-data"),
        "LINEUP_SECRET_KEY": "mcp-client-secret-" + "x" * 32,
        "LINEUP_LOG_LEVEL": "WARNING",
    }
    if "PYTHONPATH" in os.environ:  # the client runs the same source tree as the tests
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


async def confirm_paired_agent(hub: LiveHub, name: str) -> str:
    async def pending() -> str | None:
        agents = (await hub.api("GET", "/agents"))["agents"]
        return next((a["id"] for a in agents if a["status"] == "pending"), None)

    agent_id = await eventually(pending)
    await hub.confirm(agent_id, name)
    return str(agent_id)


@contextlib.asynccontextmanager
async def stdio_agent(
    hub: LiveHub, state_dir: Path, *extra: str, confirm: bool = True, **options: Any
) -> AsyncIterator[McpAgent]:
    """``lineup mcp`` started by the MCP client, paired with a fresh code on its first start
    (later starts use the stored credential; the agent is confirmed once, the first time).
    ``options`` are those of ``mcp.Client``."""
    command = [
        *("-m", "hub.cli", "mcp", "--hub", hub.url, "--name", "Claude Code"),
        *("--pair", await hub.pairing_code(), "--state-dir", str(state_dir), *extra),
    ]
    parameters = StdioServerParameters(
        command=sys.executable, args=command, env=_client_env(state_dir), cwd=str(state_dir)
    )
    state_dir.mkdir(parents=True, exist_ok=True)
    async with Client(parameters, **options) as client:
        if confirm:
            agent_id = await confirm_paired_agent(hub, "Claude Code")
        else:
            agent_id = (await hub.api("GET", "/agents"))["agents"][0]["id"]
        yield McpAgent(client, hub, agent_id)


async def paired_credential(hub: LiveHub, state_dir: Path) -> str:
    """What docs/mcp.md tells people to run once: pair, print the credential, exit."""
    state_dir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "hub.cli", "mcp", "--hub", hub.url, "--name", "Cursor"]
    command += ["--pair", await hub.pairing_code(), "--state-dir", str(state_dir)]
    done = await asyncio.to_thread(
        subprocess.run,
        [*command, "--print-credential"],
        env=_client_env(state_dir),
        cwd=state_dir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@contextlib.asynccontextmanager
async def http_agent(hub: LiveHub, credential: str, **options: Any) -> AsyncIterator[McpAgent]:
    """The official client on the hub's ``/mcp/`` with the credential as bearer token;
    ``options`` are those of ``mcp.Client`` (``mode="legacy"`` for the 2025-11-25
    handshake instead of 2026-07-28, ``elicitation_callback``, ``extensions``)."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {credential}"},
        timeout=httpx2.Timeout(30, read=300),
    )
    transport = streamable_http_client(f"{hub.url}/mcp/", http_client=http)
    async with http, Client(transport, **options) as client:
        agents = (await hub.api("GET", "/agents"))["agents"]
        pending = [a for a in agents if a["status"] == "pending"]
        agent_id = await confirm_paired_agent(hub, "Cursor") if pending else agents[0]["id"]
        yield McpAgent(client, hub, agent_id)


Transport = Callable[[LiveHub, Path], contextlib.AbstractAsyncContextManager[McpAgent]]


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest) -> Callable[[LiveHub, Path], Awaitable[Any]]:
    """Connect an MCP client over each transport in turn."""

    @contextlib.asynccontextmanager
    async def over(hub: LiveHub, state_dir: Path) -> AsyncIterator[McpAgent]:
        if request.param == "stdio":
            async with stdio_agent(hub, state_dir) as agent:
                yield agent
        else:
            credential = await paired_credential(hub, state_dir)
            async with http_agent(hub, credential) as agent:
                yield agent

    return over  # type: ignore[return-value]
