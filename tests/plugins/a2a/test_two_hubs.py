"""Two ``lineup serve`` processes on one PostgreSQL drive a remote call exactly once.

Both run the A2A connector and both see the call in the ledger; only the one holding its
lease talks to the remote. The remote (a real a2a-sdk server) counts the JSON-RPC calls it
answers: one streaming send, never a second reader while the first stream is open. Then
the driving process is killed with SIGKILL: the other takes the call over once the lease
runs out, resumes it (``GetTask``, then ``SubscribeToTask``) and the task ends with every
report logged once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.core.store.remote_models import RemoteCall
from hub.testing import HubProcess, eventually, opened
from hub.testing import test_postgres_url as postgres_url
from tests.plugins.a2a.peers import AsksWhenReleased, Slow, serve_remote

pytestmark = pytest.mark.skipif(
    postgres_url() is None, reason="several hub processes share one PostgreSQL"
)

LEASE_S = 1.5
ENV = {
    "LINEUP_A2A_ENABLED": "true",
    "LINEUP_OUTBOUND_ALLOW_PRIVATE": "true",
    "LINEUP_A2A_POLL_INTERVAL_S": "0.05",
    "LINEUP_A2A_LEASE_S": str(LEASE_S),
}


async def person_on(hub: HubProcess) -> tuple[str, str]:
    async with httpx.AsyncClient(base_url=hub.url) as web:
        response = await web.post(
            "/api/v1/auth/register",
            json={
                "email": "p@example.com",
                "password": "correct horse battery",
                "displayName": "P",
            },
        )
        assert response.status_code == 201, response.text
        token = (await web.post("/api/v1/auth/tokens", json={"name": "t"})).json()["token"]
    return response.json()["workspaceId"], token


def api(hub: HubProcess, workspace: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=f"{hub.url}/api/v1/workspaces/{workspace}",
        headers={"Authorization": f"Bearer {token}"},
    )


async def detail_once(client: httpx.AsyncClient, path: str, check: Any) -> Any:
    response = await client.get(path)
    assert response.status_code == 200, response.text
    detail = response.json()
    return detail if check(detail) else None


async def test_one_process_drives_a_call_and_another_takes_over_when_it_dies(
    database_url: str, tmp_path: Path
) -> None:
    executor = Slow()
    hubs = [HubProcess(database_url, tmp_path / name, **ENV) for name in ("a", "b")]
    try:
        await asyncio.gather(*(asyncio.to_thread(hub.start) for hub in hubs))
        workspace, token = await person_on(hubs[0])
        async with serve_remote(executor) as remote, opened(database_url):
            async with api(hubs[0], workspace, token) as first:
                agent = (await first.post("/remote-agents", json={"url": remote.url})).json()
                created = await first.post(
                    "/tasks", json={"title": "Write the report", "targetAgentId": agent["id"]}
                )
                path = f"/tasks/{created.json()['id']}"
                await eventually(
                    lambda: detail_once(first, path, lambda d: d["summary"] == "step 1 of 3")
                )
            ledger = await RemoteCall.get(id=path.rsplit("/", 1)[1])
            # Let both processes make several passes over the ledger while the call runs:
            # the driver renews its lease every third of it, the other looks for calls to
            # claim once a lease at least, so three leases' worth of renewals is three looks.
            renewed_from = ledger.lease_expires_at
            assert renewed_from is not None

            async def renewed() -> bool:
                row = await RemoteCall.get(id=ledger.id)
                return (row.lease_expires_at - renewed_from).total_seconds() >= 3 * LEASE_S

            await eventually(renewed)
            assert remote.methods == ["SendStreamingMessage"]  # no second reader, no resend
            assert remote.peak_calls == {"SendStreamingMessage": 1}

            owner = (await RemoteCall.get(id=ledger.id)).owner
            assert owner is not None
            driver_pid = int(owner.split(":")[1])
            [driver] = [h for h in hubs if h.process and h.process.pid == driver_pid]
            [survivor] = [h for h in hubs if h is not driver]
            await asyncio.to_thread(driver.kill)

            async def taken_over() -> bool:
                row = await RemoteCall.get(id=ledger.id)
                return row.owner is not None and row.owner != owner

            await eventually(taken_over)
            await eventually(lambda: "SubscribeToTask" in remote.methods)
            executor.release.set()
            async with api(survivor, workspace, token) as second:
                detail = await eventually(
                    lambda: detail_once(second, path, lambda d: d["status"] == "succeeded")
                )
            final = await RemoteCall.get(id=ledger.id)
    finally:
        for hub in hubs:
            await asyncio.to_thread(hub.stop)
    assert int(str(final.owner).split(":")[1]) == survivor.process.pid  # type: ignore[union-attr]
    assert executor.inputs == ["Write the report"]
    assert remote.methods == ["SendStreamingMessage", "GetTask", "SubscribeToTask"]
    assert remote.peak_calls["SubscribeToTask"] == 1
    summaries = [e["payload"].get("summary") for e in detail["timeline"]]
    for report in ("step 1 of 3", "step 2 of 3", "step 3 of 3", "Report ready."):
        assert summaries.count(report) == 1, report
    kinds = [e["type"] for e in detail["timeline"]]
    assert kinds.count("task.accepted") == 1 and kinds.count("artifact.created") == 1


async def test_a_push_taken_by_the_process_that_does_not_drive_the_call_wakes_the_driver(
    database_url: str, tmp_path: Path
) -> None:
    """As behind a load balancer: both processes answer the one public URL, here the second
    one's, where the remote posts its pushes; the first drives the call. Its slowest read is
    30 s apart, so the card that comes sooner came by the push the second passed on."""
    executor = AsksWhenReleased()
    env = {**ENV, "LINEUP_A2A_POLL_INTERVAL_S": "600", "LINEUP_A2A_LEASE_S": "30"}
    driver, receiver = (HubProcess(database_url, tmp_path / name, **env) for name in "ab")
    driver.env["LINEUP_PUBLIC_URL"] = receiver.env["LINEUP_PUBLIC_URL"] = receiver.url
    try:
        await asyncio.to_thread(driver.start)  # alone: it is the one that claims the call
        workspace, token = await person_on(driver)
        async with (
            serve_remote(executor, streaming=False, push=True) as remote,
            api(driver, workspace, token) as first,
        ):
            assert remote.pushes is not None
            agent = (await first.post("/remote-agents", json={"url": remote.url})).json()
            created = await first.post(
                "/tasks", json={"title": "Paint the button", "targetAgentId": agent["id"]}
            )
            path = f"/tasks/{created.json()['id']}"
            await eventually(
                lambda: detail_once(first, path, lambda d: d["remote"]["updates"] == "push")
            )
            await asyncio.to_thread(receiver.start)
            executor.release.set()
            detail = await eventually(
                lambda: detail_once(first, path, lambda d: d["status"] == "waiting_for_human"),
                within=20,
            )
            assert {p.url.split("/a2a/")[0] for p in remote.pushes.sent} == {receiver.url}
            # At the start, then one read per push at most.
            assert 2 <= remote.methods.count("GetTask") <= 1 + len(remote.pushes.sent)
            async with opened(database_url):
                owner = (await RemoteCall.get(id=path.rsplit("/", 1)[1])).owner
            assert owner is not None and int(owner.split(":")[1]) == driver.process.pid  # type: ignore[union-attr]
    finally:
        for hub in (driver, receiver):
            await asyncio.to_thread(hub.stop)
    assert detail["remote"]["lastPushAt"] is not None
