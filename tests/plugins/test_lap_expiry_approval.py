"""An agent on the LAP socket cannot make a card approve itself by silence where the
workspace keeps that for people: never on a high-risk card by default, and on no risk the
owners took out of ``approveOnExpiry``. Against ``lineup serve`` over real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Agent, Interaction
from hub.testing import HubProcess
from tests.core.agent_setup import new_code
from tests.plugins.lap_client import RawAgent, raw_agent
from tests.plugins.test_lap_gateway import assign_task

APPROVE_ON_EXPIRY = {"onExpiry": "approve"}


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[HubProcess]:
    process = HubProcess(db, tmp_path / "hub", LINEUP_HEARTBEAT_INTERVAL_S="0.5")
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


async def ask(agent: RawAgent, task_id: str, risk: str, policy: Any = None) -> dict[str, Any]:
    card: dict[str, Any] = {"type": "approval", "title": f"A {risk}-risk step", "risk": risk}
    card["expiresAt"] = "2099-01-01T00:00:00Z"
    if policy is not None:
        card["policy"] = policy
    return await agent.call("interaction.requested", {"interaction": card}, taskId=task_id)


async def test_an_agent_cannot_make_a_card_approve_itself_where_the_workspace_forbids_it(
    hub: HubProcess,
) -> None:
    owner, workspace = await create_user("owner@example.com", "correct horse", "Owner")
    _, token = await create_api_token(owner, "settings")
    code = await new_code(workspace)
    async with raw_agent(hub.url) as (agent, _):
        await agent.hello(pairingCode=code, name="deployer")
        paired = await Agent.get(workspace_id=workspace.id)
        task_id = await assign_task(workspace, paired.id)
        await agent.downlink(within=10)
        assert (await agent.call("task.accepted", {"taskId": task_id}))["type"] == "ack"

        refused = await ask(agent, task_id, "high", APPROVE_ON_EXPIRY)
        assert refused["type"] == "error", refused
        assert refused["payload"]["code"] == "expiry_approval_not_allowed"
        assert "onExpiry" in refused["payload"]["hint"]
        assert not await Interaction.filter(workspace_id=workspace.id).exists()
        # Low risk may, by default; and a high-risk card that lets people decide is fine.
        assert (await ask(agent, task_id, "low", APPROVE_ON_EXPIRY))["type"] == "ack"
        assert (await ask(agent, task_id, "high", {"onExpiry": "deny"}))["type"] == "ack"

        async with httpx.AsyncClient(
            base_url=hub.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
        ) as http:
            path = f"/api/v1/workspaces/{workspace.id}/approval-settings"
            assert (await http.get(path)).json() == {"approveOnExpiry": ["low", "medium"]}
            changed = await http.put(path, json={"approveOnExpiry": ["medium"]})
            assert changed.status_code == 200, changed.text
            assert changed.json() == {"approveOnExpiry": ["medium"]}

        refused_low = await ask(agent, task_id, "low", APPROVE_ON_EXPIRY)
        assert refused_low["payload"]["code"] == "expiry_approval_not_allowed"
        assert (await ask(agent, task_id, "medium", APPROVE_ON_EXPIRY))["type"] == "ack"
    assert await Interaction.filter(workspace_id=workspace.id).count() == 3
