"""A log that lost its acknowledged tail is never continued as if nothing happened.

Two agents (over LAP) and a browser (``/ws/client``) follow a real hub. The hub stops, and
the database is left as a power cut with unsynced commits would leave it: the last events
gone and the workspace's ``last_sequence`` lowered, under the same epoch. The hub starts
again. The first agent returns with a sequence beyond the log's end: it is resynced, and
the workspace starts a new epoch. The log then grows past what the others saw, so their
cursors alone no longer look wrong; they come back with the old epoch and are told to
resync, instead of resuming after sequences the hub has since given to other events.
Everything the clients receive afterwards arrives, none skipped.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from hub.core.agents.registry import confirm_agent
from hub.core.log.events import last_sequence
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event, Task, Workspace
from hub.testing import HubProcess
from tests.core.agent_setup import paired_agent
from tests.plugins.lap_client import RawAgent, raw_agent

INTERVAL = 0.5  # heartbeat interval, and so how often the hub checks the log for appends
LOST = "lost events it had acknowledged"


async def assign_task(hub: HubProcess, token: str, workspace_id: str, agent_id: str) -> str:
    """A task for the agent, created through the hub's API as a person would."""
    async with httpx.AsyncClient(base_url=hub.url, trust_env=False) as client:
        response = await client.post(
            f"/api/v1/workspaces/{workspace_id}/tasks",
            json={"title": "work", "targetAgentId": agent_id},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


@asynccontextmanager
async def browser(
    hub: HubProcess, token: str, workspace_id: str, **cursor: object
) -> AsyncIterator[ClientConnection]:
    query = "&".join(f"{k}={v}" for k, v in {"workspace": workspace_id, **cursor}.items())
    address = hub.url.replace("http://", "ws://") + f"/ws/client?{query}"
    headers = {"Authorization": f"Bearer {token}"}
    async with connect(address, additional_headers=headers, proxy=None, open_timeout=10) as ws:
        yield ws


async def frame(socket: ClientConnection) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(await asyncio.wait_for(socket.recv(), 10))
    return parsed


async def downlink_of(agent: RawAgent, task_id: str) -> int:
    """The sequence of the agent's next downlink, which must be the task just assigned."""
    got = await agent.downlink(within=10)
    assert got["payload"]["task"]["id"] == task_id
    return int(got["sequence"])


async def cut_the_tail(workspace_id: str, keep: int) -> None:
    """What a power cut leaves of commits never synced: the events after ``keep`` gone with
    what they made, and ``last_sequence`` back at ``keep``."""
    lost = await Event.filter(workspace_id=workspace_id, sequence__gt=keep)
    await Task.filter(id__in=[e.task_id for e in lost if e.task_id]).delete()
    await Event.filter(workspace_id=workspace_id, sequence__gt=keep).delete()
    await Workspace.filter(id=workspace_id).update(last_sequence=keep)


async def test_clients_ahead_of_a_log_that_lost_its_tail_resync_under_a_new_epoch(
    db: str, tmp_path: Path
) -> None:
    user, workspace = await create_user("cut@example.com", "correct horse", "Cut")
    _, token = await create_api_token(user, "browser")
    agents = {}
    for name in ("first", "second"):
        agent, credential = await paired_agent(workspace, name)
        await confirm_agent(workspace.id, agent.id, name, by=f"user:{user.id}")
        agents[name] = (agent.id, credential)
    (first_id, first_key), (second_id, second_key) = agents["first"], agents["second"]
    hub = HubProcess(db, tmp_path / "hub", LINEUP_HEARTBEAT_INTERVAL_S=str(INTERVAL))
    await asyncio.to_thread(hub.start)
    try:
        # Before the cut: each agent and the browser see their events up to the tail.
        async with (
            raw_agent(hub.url, first_key) as (first, _),
            raw_agent(hub.url, second_key) as (second, _),
        ):
            epoch = (await first.hello())["payload"]["epoch"]
            await second.hello(epoch=epoch)
            keep = await last_sequence(workspace.id)
            # Three events each, so the tail outlasts what reconnecting appends at once
            # (agent.online).
            for agent, agent_id in ((first, first_id), (second, second_id)) * 3:
                saw = await downlink_of(
                    agent, await assign_task(hub, token, workspace.id, agent_id)
                )
                if agent is first:
                    first_saw = saw
                else:
                    second_saw = saw
        browser_saw = await last_sequence(workspace.id)
        async with browser(hub, token, workspace.id, after=keep, epoch=epoch) as socket:
            assert (await frame(socket))["type"] == "client.welcome"
            seen = [(await frame(socket))["sequence"] for _ in range(browser_saw - keep)]
            assert seen == list(range(keep + 1, browser_saw + 1))
        assert keep < first_saw < second_saw <= browser_saw
        await asyncio.to_thread(hub.stop)

        await cut_the_tail(workspace.id, keep)
        await asyncio.to_thread(hub.start)

        # The first agent is ahead of the log in its epoch: resynced, under a new epoch.
        async with raw_agent(hub.url, first_key) as (first, _):
            welcome = await first.hello(lastSequence=first_saw, epoch=epoch)
            new_epoch = welcome["payload"]["epoch"]
            assert new_epoch != epoch
            resync = await first.frame_of_type("system.resync_required")
            assert resync["payload"]["reason"] == "ahead_of_log"
            # The log grows past every sequence the clients saw before the cut; each new
            # event for the first agent reaches it.
            while await last_sequence(workspace.id) <= browser_saw:
                await downlink_of(first, await assign_task(hub, token, workspace.id, first_id))

        # The second agent's cursor is inside the log now, but of the old epoch: resync.
        async with raw_agent(hub.url, second_key) as (second, _):
            welcome = await second.hello(lastSequence=second_saw, epoch=epoch)
            assert welcome["payload"]["epoch"] == new_epoch
            resync = await second.frame_of_type("system.resync_required")
            assert resync["payload"]["reason"] == "epoch_changed"
            assert resync["payload"]["lastSequence"] > second_saw
            task_id = await assign_task(hub, token, workspace.id, second_id)
            await downlink_of(second, task_id)
            assert not [f for f in second.downlinks if f["payload"]["task"]["id"] != task_id]

        # So is the browser's, which then follows every event from the log's end.
        async with browser(hub, token, workspace.id, after=browser_saw, epoch=epoch) as socket:
            welcome = await frame(socket)
            assert welcome["payload"]["epoch"] == new_epoch
            resync = await frame(socket)
            assert resync["type"] == "system.resync_required"
            assert resync["payload"]["reason"] == "epoch_changed"
            end = resync["payload"]["lastSequence"]
            await assign_task(hub, token, workspace.id, second_id)
            sequence = await last_sequence(workspace.id)
            later = [(await frame(socket))["sequence"] for _ in range(sequence - end)]
            assert later == list(range(end + 1, sequence + 1))
        await asyncio.to_thread(hub.stop)
        assert hub.log().count(LOST) == 1
    finally:
        await asyncio.to_thread(hub.stop)
