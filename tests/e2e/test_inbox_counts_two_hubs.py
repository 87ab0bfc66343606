"""The inbox's kept counts with two hub processes writing one workspace (PostgreSQL).

Agents on hub A and hub B start tasks and ask cards at the same time, some of them quorum
cards; two people answer the same cards at once, one through each hub (one answer wins,
the other is told who decided; a quorum counts both votes); tasks end, failed, succeeded
or cancelled with their open cards. Then each person's badge and inbox, read from either
hub, hold what the cards say, and the kept rows equal a count of the rows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.ids import new_id
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Interaction, InteractionStatus, Membership, Role
from hub.core.store.transactions import in_transaction
from hub.core.work import inbox_counts
from hub.protocol.clock import utcnow
from hub.testing import HubProcess, opened
from hub.testing import test_postgres_url as postgres_url
from tests.plugins.lap_client import raw_agent

pytestmark = pytest.mark.skipif(
    postgres_url() is None, reason="several hub processes share one PostgreSQL"
)

SECRET = "two-hubs-counts-" + "c" * 32
TASKS_PER_AGENT = 8


async def seed(database_url: str) -> dict[str, Any]:
    async with opened(database_url):
        owner, workspace = await create_user("own@example.com", "correct horse", "Own")
        people = {}
        for name in ("ada", "bo"):
            user, _ = await create_user(f"{name}@example.com", "correct horse", name)
            await Membership.create(
                id=new_id("membership"), workspace=workspace, user=user, role=Role.MEMBER
            )
            people[name] = {"id": user.id, "token": (await create_api_token(user, "t"))[1]}
        agents = []
        for name in ("left", "right"):
            code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
            agent, credential = await redeem_pairing_code(
                code, name=name, runtime="test", version="1", capabilities=[], secret_key=SECRET
            )
            await confirm_agent(workspace.id, agent.id, name, by=f"user:{owner.id}")
            agents.append({"id": agent.id, "credential": credential})
    return {"workspace": workspace.id, "people": people, "agents": agents}


async def agent_work(url: str, agent: dict[str, Any], approvers: list[str], n: int) -> list[str]:
    """Start tasks and ask a card on each (every third a quorum of both people); returns
    the task ids."""
    tasks = []
    async with raw_agent(url, agent["credential"]) as (lap, _):
        await lap.hello(runtime="test")
        for k in range(n):
            started = await lap.call("task.created", {"title": f"job {k}"})
            task_id = started["payload"]["taskId"]
            await lap.call("task.accepted", {"taskId": task_id})
            card: dict[str, Any] = {"id": new_id("interaction"), "type": "approval"}
            card["title"] = f"go {k}?"
            if k % 3 == 0:
                card["policy"] = {"mode": "quorum", "required": 2, "approvers": approvers}
            answer = await lap.call("interaction.requested", {"interaction": card}, taskId=task_id)
            assert answer["type"] == "ack", answer
            tasks.append(task_id)
    return tasks


async def test_counts_stay_exact_with_two_hubs_writing(database_url: str, tmp_path: Path) -> None:
    data = await seed(database_url)
    ws = data["workspace"]
    env = {"LINEUP_SECRET_KEY": SECRET}
    hub_a = HubProcess(database_url, tmp_path / "a", **env).start()
    hub_b = HubProcess(database_url, tmp_path / "b", **env).start()
    ada, bo = data["people"]["ada"], data["people"]["bo"]
    try:
        approvers = [ada["id"], bo["id"]]
        left, right = data["agents"]
        made = await asyncio.gather(
            agent_work(hub_a.url, left, approvers, TASKS_PER_AGENT),
            agent_work(hub_b.url, right, approvers, TASKS_PER_AGENT),
        )
        async with (
            httpx.AsyncClient(base_url=hub_a.url, timeout=30) as on_a,
            httpx.AsyncClient(base_url=hub_b.url, timeout=30) as on_b,
        ):
            api = f"/api/v1/workspaces/{ws}"

            async def answer_all(http: httpx.AsyncClient, person: dict[str, Any]) -> None:
                auth = {"Authorization": f"Bearer {person['token']}"}
                box = (await http.get(f"{api}/inbox?limit=200", headers=auth)).json()
                for n, item in enumerate(box["waitingForMe"]):
                    if n % 2:
                        continue  # leave some waiting
                    card_id = item["interaction"]["id"]
                    answered = await http.post(
                        f"{api}/interactions/{card_id}/respond",
                        headers=auth,
                        json={"optionId": "approve"},
                    )
                    assert answered.status_code in (200, 409), answered.text

            # Both people at once, each through another hub, on the same cards.
            await asyncio.gather(answer_all(on_a, ada), answer_all(on_b, bo))

            # The agents end some tasks at once (a task still waiting for a person can only
            # be cancelled: the others are refused): open cards go with them.
            async def end(url: str, agent: dict[str, Any], tasks: list[str]) -> None:
                async with raw_agent(url, agent["credential"]) as (lap, _):
                    await lap.hello(runtime="test")
                    for k, task_id in enumerate(tasks[:4]):
                        status = ("failed", "succeeded", "cancelled", "cancelled")[k]
                        await lap.call("task.status_changed", {"taskId": task_id, "status": status})

            await asyncio.gather(end(hub_a.url, left, made[0]), end(hub_b.url, right, made[1]))

            async with opened(database_url):
                since = inbox_counts.first_day(utcnow(), 8)
                async with in_transaction() as connection:
                    kept = await inbox_counts.kept(ws, connection, since=since)
                    counted = await inbox_counts.recount(ws, connection, since=since)
                assert kept == counted
                pending = await Interaction.filter(
                    workspace_id=ws, status=InteractionStatus.PENDING
                )
                expected = {
                    name: sum(
                        1
                        for card in pending
                        if person["id"] not in {v["actor"][5:] for v in card.votes or []}
                        and (
                            not (card.policy or {}).get("approvers")
                            or person["id"] in card.policy["approvers"]
                        )
                    )
                    for name, person in data["people"].items()
                }
            assert 0 < expected["ada"] < 2 * TASKS_PER_AGENT
            for http in (on_a, on_b):
                for name, person in data["people"].items():
                    auth = {"Authorization": f"Bearer {person['token']}"}
                    box = (await http.get(f"{api}/inbox?limit=200", headers=auth)).json()
                    assert box["counts"]["waitingForMe"] == expected[name]
                    assert len(box["waitingForMe"]) == expected[name]
                    # Failed, and running with their agent gone (the agents left).
                    attention = box["needsAttention"]
                    assert box["counts"]["needsAttention"] == len(attention)
                    assert "failed" in [item["reason"] for item in attention]
                    assert box["counts"]["recentlyDone"] == len(box["recentlyDone"]) > 0
    finally:
        hub_a.stop()
        hub_b.stop()
