"""A hub process with the A2A connector on, a person with a token and a browser session,
and waits for what a remote's pushes bring (``test_push``, ``test_push_fallback``).

A poll interval of 600 s makes the hub's slowest read of a quiet task 30 s apart
(``updates.poll_bound``); each wait here for what a push brings gives up well before that,
so what arrives in time arrived by push, not by a poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from hub.testing import HubProcess
from plugins.a2a_connector.updates import poll_bound
from tests.plugins.a2a.peers import Remote

QUIET_POLL_S = 600.0
WAIT_S = 20.0  # each wait for a push's effect; well under the bound below
assert poll_bound(QUIET_POLL_S) > WAIT_S


@dataclass
class Hub:
    process: HubProcess
    api: httpx.AsyncClient  # the person's JSON API, in their workspace
    browser: httpx.AsyncClient  # the person signed in, for the pages
    workspace_id: str
    agent_id: str = ""

    async def page(self, path: str) -> str:
        response = await self.browser.get(f"/w/{self.workspace_id}{path}")
        assert response.status_code == 200, response.text
        return response.text

    @property
    def secret_key(self) -> str:
        return self.process.env["LINEUP_SECRET_KEY"]

    async def task(self, task_id: str) -> dict[str, Any]:
        response = await self.api.get(f"/tasks/{task_id}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    async def until(
        self, task_id: str, check: Callable[[dict[str, Any]], bool], within_s: float = WAIT_S
    ) -> dict[str, Any]:
        detail: dict[str, Any] = {}

        async def poll() -> None:
            nonlocal detail
            while True:
                detail = await self.task(task_id)
                if check(detail):
                    return
                await asyncio.sleep(0.05)

        try:
            await asyncio.wait_for(poll(), within_s)
        except TimeoutError:
            raise AssertionError(f"the task never got there; last seen: {detail}") from None
        return detail

    async def start_task(self, remote: Remote) -> str:
        agent = (await self.api.post("/remote-agents", json={"url": remote.url})).json()
        self.agent_id = agent["id"]
        created = await self.api.post(
            "/tasks", json={"title": "Paint the button", "targetAgentId": agent["id"]}
        )
        assert created.status_code == 201, created.text
        return str(created.json()["id"])

    async def answer(self, detail: dict[str, Any], text: str) -> None:
        card = next(i for i in detail["interactions"] if i["status"] == "pending")
        response = await self.api.post(f"/interactions/{card['id']}/respond", json={"text": text})
        assert response.status_code == 200, response.text


@contextlib.asynccontextmanager
async def running_hub(
    database_url: str, data_dir: Path, *, poll_interval_s: float = QUIET_POLL_S, **env: str
) -> AsyncIterator[Hub]:
    process = HubProcess(
        database_url,
        data_dir,
        LINEUP_A2A_ENABLED="true",
        LINEUP_OUTBOUND_ALLOW_PRIVATE="true",
        LINEUP_A2A_POLL_INTERVAL_S=str(poll_interval_s),
        **env,
    )
    await asyncio.to_thread(process.start)
    try:
        async with httpx.AsyncClient(base_url=process.url) as web:
            registered = await web.post(
                "/api/v1/auth/register",
                json={"email": "p@example.com", "password": "correct horse battery"}
                | {"displayName": "P"},
            )
            workspace = registered.json()["workspaceId"]
            token = (await web.post("/api/v1/auth/tokens", json={"name": "t"})).json()["token"]
            api = httpx.AsyncClient(
                base_url=f"{process.url}/api/v1/workspaces/{workspace}",
                headers={"Authorization": f"Bearer {token}"},
            )
            async with api:
                yield Hub(process, api, web, workspace)
    finally:
        await asyncio.to_thread(process.stop)


async def settled(remote: Remote) -> None:
    """Once the remote has sent no push and answered no read for half a second."""
    assert remote.pushes is not None

    def seen() -> tuple[int, int]:
        assert remote.pushes is not None
        return len(remote.pushes.sent), len(remote.methods)

    async def quiet() -> None:
        last = seen()
        while True:
            await asyncio.sleep(0.5)
            if seen() == last:
                return
            last = seen()

    await asyncio.wait_for(quiet(), WAIT_S)


def waiting(detail: dict[str, Any]) -> bool:
    return detail["status"] == "waiting_for_human" and any(
        i["status"] == "pending" for i in detail["interactions"]
    )


def followed_by(mode: str) -> Callable[[dict[str, Any]], bool]:
    return lambda detail: (detail["remote"] or {}).get("updates") == mode
