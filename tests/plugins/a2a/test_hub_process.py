"""``lineup serve`` as its own process, killed with SIGKILL mid-task, resumes from the ledger.

Nothing runs at shutdown after a SIGKILL, so what the second process knows of the remote
task is only what the first had committed: the ledger row and the log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from hub.testing import HubProcess
from tests.plugins.a2a.peers import Slow, serve_remote

ENV = {
    "LINEUP_A2A_ENABLED": "true",
    "LINEUP_OUTBOUND_ALLOW_PRIVATE": "true",
    "LINEUP_A2A_POLL_INTERVAL_S": "0.05",
    # On PostgreSQL the restarted hub takes the killed one's calls over when their leases
    # end; on SQLite at once (one process per database file).
    "LINEUP_A2A_LEASE_S": "3",
}


async def _task(client: httpx.AsyncClient, path: str) -> dict[str, Any]:
    response = await client.get(path)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def _until(client: httpx.AsyncClient, path: str, check: Any) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            detail = await _task(client, path)
            if check(detail):
                return detail
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), 30)


async def test_a_killed_hub_resumes_the_remote_task_on_start(
    database_url: str, tmp_path: Path
) -> None:
    executor = Slow()
    hub = HubProcess(database_url, tmp_path / "hub", **ENV)
    await asyncio.to_thread(hub.start)
    try:
        async with serve_remote(executor) as remote, httpx.AsyncClient(base_url=hub.url) as web:
            response = await web.post(
                "/api/v1/auth/register",
                json={
                    "email": "p@example.com",
                    "password": "correct horse battery",
                    "displayName": "P",
                },
            )
            workspace = response.json()["workspaceId"]
            token = (await web.post("/api/v1/auth/tokens", json={"name": "t"})).json()["token"]
            api = httpx.AsyncClient(
                base_url=f"{hub.url}/api/v1/workspaces/{workspace}",
                headers={"Authorization": f"Bearer {token}"},
            )
            async with api:
                agent = (await api.post("/remote-agents", json={"url": remote.url})).json()
                created = await api.post(
                    "/tasks", json={"title": "Write the report", "targetAgentId": agent["id"]}
                )
                task_path = f"/tasks/{created.json()['id']}"
                await _until(api, task_path, lambda d: d["summary"] == "step 1 of 3")

                await asyncio.to_thread(hub.kill)
                executor.release.set()  # the remote finishes while no hub is running
                await asyncio.to_thread(hub.start)

                detail = await _until(api, task_path, lambda d: d["status"] == "succeeded")
    finally:
        await asyncio.to_thread(hub.stop)
    assert detail["summary"] == "Report ready."
    assert [a["name"] for a in detail["artifacts"]] == ["report.md"]
    assert executor.inputs == ["Write the report"]
