"""A dropped agent, as a person sees it: a hub process, the SDK agent over LAP through a
relay that cuts its connection, and Chromium on the task's page.

The agent asks for an approval and its connection dies (no close handshake, as when its
process is killed); the task's page says "Connection lost" within 2 s, where the heartbeat
rule alone would take two intervals (50 s at the hub's default). The person approves
meanwhile and is told the answer is queued; the agent comes back, gets it, and the card
says when it was delivered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.core.agents.pairing import create_pairing_code
from hub.core.store.models import Interaction
from hub.sdk import Agent, Backoff, Resolution
from hub.sdk.task import Task
from hub.testing import HubProcess, eventually
from tests.e2e.browser.conftest import Person
from tests.sdk.chaos_proxy import ChaosProxy

pytestmark = pytest.mark.same_on_every_database

LOST_WITHIN_MS = 2_000  # "a dropped agent shown as lost within 2 s on its task's page"


async def api(person: Person, method: str, path: str, body: object = None) -> dict:  # type: ignore[type-arg]
    url = f"{person.hub.url}/api/v1/workspaces/{person.workspace_id}{path}"
    response = await person.context.request.fetch(
        url, method=method, data=body, headers={"Origin": person.hub.url}
    )
    assert response.ok, f"{method} {path} → {response.status}: {await response.text()}"
    return await response.json()  # type: ignore[no-any-return]


async def test_a_dropped_agent_is_lost_at_once_and_an_answer_waits_for_it(
    sign_up, orm, hub: HubProcess, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    code, _ = await create_pairing_code(
        ada.workspace_id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
    )
    answers: list[Resolution] = []
    async with ChaosProxy(hub.port) as proxy:
        agent = Agent(
            proxy.url,
            state_dir=tmp_path / "agent",
            pairing_code=code,
            name="Deployer",
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        )

        @agent.on_task
        async def work(task: Task) -> None:
            await task.accept()
            answers.append(await task.request_approval("Ship the release?"))

        async with agent:
            assert agent.agent_id is not None
            await api(ada, "POST", f"/agents/{agent.agent_id}/confirm", {"name": "Deployer"})
            task = await api(
                ada, "POST", "/tasks", {"title": "Release", "targetAgentId": agent.agent_id}
            )

            async def asked() -> Interaction | None:
                return await Interaction.filter(task_id=task["id"]).first()

            card = await eventually(asked)
            await page.goto(ada.url(f"/tasks/{task['id']}"))
            await page.wait_for_function("() => document.body.dataset.live === 'live'")
            header = page.locator("[data-live='task'] > .row").first
            assert await header.locator("[data-status='waiting_for_human']").count() == 1
            assert await page.locator("[data-status='lost']").count() == 0

            proxy.refusing = True  # it keeps trying to come back; not yet
            assert proxy.kill_one()
            await header.locator("[data-status='lost']").wait_for(timeout=LOST_WITHIN_MS)
            away_card = page.locator(f"[data-card='{card.id}']")
            await away_card.locator("[data-status='lost']").wait_for()
            assert "Connection lost" in await header.inner_text()

            await away_card.get_by_role("button", name="Approve").click()
            await page.get_by_text("Your answer is queued until the agent returns.").wait_for()
            decided = page.locator(f"[data-card='{card.id}']")
            await decided.locator("[data-delivery='waiting']").wait_for()
            assert "Waiting to be delivered: the agent is away" in await decided.inner_text()
            assert answers == []

            proxy.refusing = False  # back: it gets the answer, and the card says when
            await decided.locator("[data-delivery='delivered']").wait_for()
            assert "Delivered to the agent at" in await decided.inner_text()
            await eventually(lambda: answers)
            assert answers[0].approved
            await header.locator("[data-status='lost']").wait_for(state="detached")
    await ada.context.close()
