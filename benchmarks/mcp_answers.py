"""The time from a person's answer to the MCP agent holding it, on the hub's ``/mcp/``.

Two ways an answer reaches an agent that asked through MCP, each measured with the official
MCP client against a live hub:

- answered in the hub (the JSON API, as the web UI does) while the tool call waits
  (2025-11-25 handshake): from sending the answer to the tool's result at the client, so
  the figure holds the answer's request, the hub's event to the agent's loopback socket
  and the MCP response;
- answered at the agent's terminal (2026-07-28: the form rides an input-required result):
  from the form's answer leaving the client's elicitation callback to the tool's result,
  so the figure holds the client's retry, the card's withdrawal in the hub and the answer.

``python -m benchmarks.mcp_answers`` on SQLite, or on PostgreSQL when
``LINEUP_TEST_DATABASE_URL`` names a server. Prints a JSON summary (ms: n, p50, p95, p99).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitRequestParams, ElicitResult

from benchmarks.databases import on_a_fresh_database
from benchmarks.stats import summary
from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import create_api_token, create_user
from hub.testing import HubProcess, opened

ROUNDS = 30


async def measure() -> dict[str, Any]:
    return await on_a_fresh_database(_measure)


async def _measure(url: str, root: Path) -> dict[str, Any]:
    async with opened(url):
        user, workspace = await create_user("bench@example.com", "correct horse", "Bench")
        _, token = await create_api_token(user, "bench")
    hub = HubProcess(url, root / "hub", LINEUP_LOG_LEVEL="WARNING")
    await asyncio.to_thread(hub.start)
    try:
        async with opened(url):
            code, _ = await create_pairing_code(
                workspace.id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
            )
        credential = await _paired(hub.url, code, root / "agent")
        api = f"/api/v1/workspaces/{workspace.id}"
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=hub.url, headers=headers, timeout=30) as person:
            agents = (await person.get(f"{api}/agents")).json()["agents"]
            await person.post(f"{api}/agents/{agents[0]['id']}/confirm", json={"name": "Bench"})
            in_hub = await _answered_in_hub(hub.url, credential, person, api)
            at_terminal = await _answered_at_terminal(hub.url, credential)
    finally:
        await asyncio.to_thread(hub.stop)
    return {"answeredInHubMs": summary(in_hub), "answeredAtTerminalMs": summary(at_terminal)}


async def _answered_in_hub(
    hub: str, credential: str, person: httpx.AsyncClient, api: str
) -> list[float]:
    samples = []
    async with _client(hub, credential, mode="legacy") as client:
        for n in range(ROUNDS + 3):
            call = asyncio.create_task(
                client.call_tool(
                    "request_approval", {"action": f"Step {n}"}, progress_callback=_ignore
                )
            )
            handle = await _waiting(person, api, f"Step {n}")
            started = time.perf_counter()
            answered = await person.post(
                f"{api}/interactions/{handle}/respond", json={"optionId": "approve"}
            )
            answered.raise_for_status()
            result = await call
            elapsed = (time.perf_counter() - started) * 1000
            assert result.structured_content and result.structured_content["approved"]
            if n >= 3:  # the first rounds warm the loopback agent and the caches
                samples.append(elapsed)
    return samples


async def _answered_at_terminal(hub: str, credential: str) -> list[float]:
    answered_at: list[float] = []

    async def terminal(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        answered_at.append(time.perf_counter())
        return ElicitResult(action="accept", content={"choice": "approve"})

    samples = []
    async with _client(hub, credential, elicitation_callback=terminal) as client:
        for n in range(ROUNDS + 3):
            result = await client.call_tool(
                "request_approval", {"action": f"Terminal step {n}"}, progress_callback=_ignore
            )
            elapsed = (time.perf_counter() - answered_at[-1]) * 1000
            assert result.structured_content and result.structured_content["via"] == "terminal"
            if n >= 3:
                samples.append(elapsed)
    return samples


def _client(hub: str, credential: str, **options: Any) -> Any:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {credential}"}, timeout=httpx2.Timeout(30, read=300)
    )
    return Client(streamable_http_client(f"{hub}/mcp/", http_client=http), **options)


async def _waiting(person: httpx.AsyncClient, api: str, title: str) -> str:
    async with asyncio.timeout(30):
        while True:
            inbox = (await person.get(f"{api}/inbox")).json()
            for item in inbox["waitingForMe"]:
                if item["interaction"]["card"]["title"] == title:
                    return str(item["interaction"]["id"])
            await asyncio.sleep(0.02)


async def _paired(hub: str, code: str, state_dir: Path) -> str:
    command = [sys.executable, "-m", "hub.cli", "mcp", "--hub", hub, "--pair", code]
    command += ["--state-dir", str(state_dir), "--name", "Bench", "--print-credential"]
    done = await asyncio.to_thread(
        subprocess.run, command, check=True, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip()


async def _ignore(progress: float, total: float | None, message: str | None) -> None:
    return None


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure()), indent=2))
