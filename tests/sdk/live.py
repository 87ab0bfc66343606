"""A real hub process for the SDK's end-to-end tests, and a person's hands on it.

The hub runs as ``lineup serve`` in its own process on a fresh database. The test process
opens the same database to create the person, their token and pairing codes through the
core's services, and drives everything a person does through the JSON API over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import websockets

from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import create_api_token, create_user
from hub.protocol.actions import action_hash
from hub.sdk import Agent
from hub.sdk.backoff import Backoff
from hub.testing import HubProcess

HEARTBEAT_INTERVAL_S = 0.5


@dataclass
class LiveHub:
    process: HubProcess
    workspace_id: str
    user_id: str
    http: httpx.AsyncClient

    @property
    def url(self) -> str:
        return self.process.url

    @property
    def secret_key(self) -> str:
        return self.process.env["LINEUP_SECRET_KEY"]

    async def pairing_code(self) -> str:
        code, _ = await create_pairing_code(
            self.workspace_id, secret_key=self.secret_key, ttl_s=600
        )
        return code

    async def api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = await self.http.request(
                method, f"/api/v1/workspaces/{self.workspace_id}{path}", json=body
            )
        except httpx.TimeoutException:
            raise AssertionError(
                f"{method} {path}: the hub did not answer in time. Where it was:\n"
                + stacks_of(self.process)
            ) from None
        if response.status_code >= 400:
            raise AssertionError(f"{method} {path} → {response.status_code}: {response.text}")
        return response.json()

    async def confirm(self, agent_id: str, name: str = "agent") -> None:
        await self.api("POST", f"/agents/{agent_id}/confirm", {"name": name})

    @contextlib.asynccontextmanager
    async def agent(
        self, state_dir: Path, name: str, *, via: str | None = None
    ) -> AsyncIterator[Agent]:
        """An SDK agent paired with a fresh code and confirmed as ``name``, running; it
        reconnects quickly, as a test wants after a hub restart. ``via``: the address it
        connects to instead of the hub's (a proxy in between)."""
        agent = Agent(
            via or self.url,
            state_dir=state_dir,
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
            pairing_code=await self.pairing_code(),
            name=name,
        )
        async with agent:
            assert agent.agent_id
            await self.confirm(agent.agent_id, name)
            yield agent

    async def conversation(self, agent_id: str, title: str = "Site rebuild") -> str:
        created = await self.api("POST", "/conversations", {"title": title, "agentIds": [agent_id]})
        return str(created["id"])

    async def task(self, agent_id: str, title: str, conversation_id: str | None = None) -> str:
        body: dict[str, Any] = {"title": title, "description": "", "targetAgentId": agent_id}
        if conversation_id:
            body["conversationId"] = conversation_id
        return str((await self.api("POST", "/tasks", body))["id"])

    @contextlib.asynccontextmanager
    async def client_socket(self) -> AsyncIterator[ClientSocket]:
        """A person's open tab: ``/ws/client`` from the log's end, as a page follows it."""
        position = await self.api("GET", "/events?after=0&limit=1")
        address = self.url.replace("http://", "ws://", 1)
        query = f"workspace={self.workspace_id}&after={position['lastSequence']}"
        headers = {"Authorization": self.http.headers["Authorization"]}
        async with websockets.connect(
            f"{address}/ws/client?{query}", additional_headers=headers
        ) as socket:
            yield ClientSocket(socket)

    async def respond(self, interaction_id: str, option_id: str, comment: str | None = None) -> Any:
        """Answer as a person who read the card: bound to the action it shows, if any."""
        body: dict[str, Any] = {"optionId": option_id}
        card = (await self.api("GET", f"/interactions/{interaction_id}"))["card"]
        if card.get("action"):
            body["actionHash"] = action_hash(card["action"]["kind"], card["action"]["fields"])
        if comment:
            body["comment"] = comment
        return await self.api("POST", f"/interactions/{interaction_id}/respond", body)


@dataclass
class ClientSocket:
    socket: Any

    async def next_of(self, type: str, within: float = 10.0) -> dict[str, Any]:
        """The next frame of ``type`` the tab is sent (sequenced or not)."""
        async with asyncio.timeout(within):
            while True:
                frame: dict[str, Any] = json.loads(await self.socket.recv())
                if frame.get("type") == type:
                    return frame


def stacks_of(process: HubProcess) -> str:
    """Stop a stuck hub with SIGABRT; with PYTHONFAULTHANDLER set it prints every thread's
    stack into its log, which this returns (the end of it)."""
    assert process.process is not None
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.process.pid, signal.SIGABRT)
    with contextlib.suppress(Exception):
        process.process.wait(5)
    time.sleep(0.2)
    return process.log()[-20_000:]


@contextlib.asynccontextmanager
async def live_hub(database_url: str, data_dir: Path, **env: str) -> AsyncIterator[LiveHub]:
    """A hub process on ``database_url`` (opened in this process too) with one person.

    It is started and stopped off the event loop: peers this loop serves (a Bot API server)
    are called by the hub while it starts, and once more while it stops (the Telegram
    updater marks what it fetched), and a blocked loop would leave that call to time out."""
    user, workspace = await create_user("owner@example.com", "correct horse", "Owner")
    _, token = await create_api_token(user, "tests")
    settings = {
        "LINEUP_HEARTBEAT_INTERVAL_S": str(HEARTBEAT_INTERVAL_S),
        "LINEUP_LOG_LEVEL": "INFO",
        "PYTHONFAULTHANDLER": "1",  # a hub that stops answering can be asked where it is
        **env,
    }
    process = HubProcess(database_url, data_dir, **settings)
    await asyncio.to_thread(process.start)
    try:
        async with httpx.AsyncClient(
            base_url=process.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as http:
            yield LiveHub(process, workspace.id, user.id, http)
    finally:
        await asyncio.to_thread(process.stop)
