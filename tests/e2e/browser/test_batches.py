"""Batches end to end: a hub process, a real SDK agent over LAP, Chromium and Telegram.

The agent asks three approvals of one task at once; the person approves all of them on the
task's page (the high-risk one after its second step) and, on another task, decides item
by item while one card was already answered in Telegram — the page reports that one and
applies the rest. The agent receives every decision exactly once, and the audit trail shows
the items of each batch under one batch id.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hub.core.agents.pairing import create_pairing_code
from hub.core.notify.channel_accounts import create_link_token
from hub.core.store.models import Interaction, InteractionStatus
from hub.sdk import Agent, Backoff, Resolution
from hub.sdk.dispatch import Downlink
from hub.sdk.task import Task
from hub.testing import HubProcess, eventually
from tests.channels.peers import BotApiPeer
from tests.e2e.browser.conftest import Person

ADA_TELEGRAM = 4242
REGIONS = ("Canary", "Europe", "Asia", "US", "Africa")


@pytest.fixture
async def hub(database_url: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[HubProcess]:
    # Started and stopped off the event loop, which serves the Bot API the hub calls then.
    env = {"LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token, "LINEUP_TELEGRAM_API_URL": bot_api.url}
    process = HubProcess(database_url, tmp_path / "hub", **env)
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        print(process.log()[-4000:])  # shown by pytest only when the test fails
        await asyncio.to_thread(process.stop)


class Deployer:
    """An SDK agent that asks every approval of a task at once and keeps what it hears."""

    def __init__(self, hub: HubProcess, code: str, state_dir: Path) -> None:
        self.agent = Agent(
            hub.url,
            state_dir=state_dir,
            pairing_code=code,
            name="Deployer",
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        )
        self.heard: Counter[str] = Counter()  # interaction.resolved frames by card
        self.answers: dict[str, list[Resolution]] = {}
        self.steps: dict[str, list[tuple[str, str | None]]] = {}
        self.agent.on("interaction.resolved")(self._heard)
        self.agent.on_task(self._work)

    async def _heard(self, downlink: Downlink) -> None:
        self.heard[downlink.payload["interactionId"]] += 1

    async def _work(self, task: Task) -> None:
        await task.accept()
        steps = self.steps[task.title]
        asks = [task.request_approval(title, risk=risk) for title, risk in steps]
        self.answers[task.title] = list(await asyncio.gather(*asks))


async def api(person: Person, method: str, path: str, body: Any = None) -> Any:
    url = f"{person.hub.url}/api/v1/workspaces/{person.workspace_id}{path}"
    response = await person.context.request.fetch(url, method=method, data=body)
    assert response.ok, f"{method} {path} → {response.status}: {await response.text()}"
    return await response.json()


async def reject_in_telegram(bot_api: BotApiPeer, title: str) -> None:
    def card() -> Any:
        return next(
            (m for m in bot_api.chat(ADA_TELEGRAM) if m.text.startswith(f"<b>{title}</b>")), None
        )

    message = await eventually(card)
    pressed = bot_api.press(ADA_TELEGRAM, message, message.button("Reject")["callback_data"])
    await eventually(lambda: pressed in bot_api.answers)
    await eventually(lambda: "by Ada via Telegram" in message.text)


async def waiting_cards(task_id: str, count: int) -> list[Interaction]:
    async def pending() -> list[Interaction] | None:
        found = await Interaction.filter(task_id=task_id).order_by("created_at", "id")
        return found if len(found) == count else None

    cards = await eventually(pending)
    return sorted(cards, key=lambda c: c.payload["title"])


# Sent, or queued if the hub missed the agent's heartbeats on a busy machine meanwhile: the
# agent's own record of its answers below is what proves each item reached it once.
THREE_SENT = re.compile(r"3 answers (were sent to the agent|are queued until the agent returns)\.")


async def test_a_batch_on_the_web_reaches_the_agent_once_per_item(
    sign_up, orm, hub: HubProcess, bot_api: BotApiPeer, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    code, _ = await create_pairing_code(
        ada.workspace_id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
    )
    token, _ = await create_link_token(ada.user_id, "telegram")
    bot_api.send_text(ADA_TELEGRAM, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA_TELEGRAM)))

    deployer = Deployer(hub, code, tmp_path / "agent")
    deployer.steps = {
        "Release": [("1 Migrate", "high"), ("2 Restart", None), ("3 Purge", None)],
        "Rollout": [(f"{n} {region}", None) for n, region in enumerate(REGIONS, 1)],
    }
    async with deployer.agent as agent:
        assert agent.agent_id is not None
        await api(ada, "POST", f"/agents/{agent.agent_id}/confirm", {"name": "Deployer"})

        # All at once: approve all, the high-risk item after its second step.
        release = await api(
            ada, "POST", "/tasks", {"title": "Release", "targetAgentId": agent.agent_id}
        )
        release_cards = await waiting_cards(release["id"], 3)
        await page.goto(ada.url(f"/tasks/{release['id']}"))
        await page.locator("[data-batch-item]").nth(2).wait_for()
        await page.get_by_role("button", name="Approve all (3)").click()
        await page.get_by_text("Confirm the high-risk items").wait_for()
        assert await page.locator("[data-batch-confirm]").count() == 1
        assert {c.status for c in await waiting_cards(release["id"], 3)} == {"pending"}
        await page.locator(f"input[name='confirm-{release_cards[0].id}']").check()
        await page.get_by_role("button", name="Confirm and send").click()
        await page.get_by_text(THREE_SENT).wait_for()
        await eventually(lambda: "Release" in deployer.answers)
        assert [a.option_id for a in deployer.answers["Release"]] == ["approve"] * 3
        assert all(a.via == "web" for a in deployer.answers["Release"])

        # A card answered in Telegram leaves the batch live, without a reload.
        rollout = await api(
            ada, "POST", "/tasks", {"title": "Rollout", "targetAgentId": agent.agent_id}
        )
        rollout_cards = await waiting_cards(rollout["id"], 5)
        await page.goto(ada.url(f"/tasks/{rollout['id']}"))
        await page.get_by_role("button", name="Approve all (5)").wait_for()
        await page.wait_for_function("() => document.body.dataset.live === 'live'")
        await page.evaluate("() => { window.sameDocument = true; }")
        await reject_in_telegram(bot_api, "5 Africa")
        await page.get_by_role("button", name="Approve all (4)").wait_for()
        assert await page.evaluate("() => window.sameDocument === true")

        # Item by item, while another card is answered in Telegram: the page (not redrawn
        # under the person filling it in) sends it too, and is told it was decided first.
        picks = ["approve", "approve", "reject", "approve"]
        for card, pick in zip(rollout_cards[:4], picks, strict=True):
            await page.locator(f"input[name='choice-{card.id}'][value='{pick}']").check()
        await reject_in_telegram(bot_api, "4 US")
        await page.get_by_role("button", name="Send these choices").click()
        await page.get_by_text(THREE_SENT).wait_for()
        await page.get_by_text("“4 US”: already decided by Ada via telegram.").wait_for()
        await eventually(lambda: "Rollout" in deployer.answers)
        got = [(a.option_id, a.via) for a in deployer.answers["Rollout"]]
        assert got == [
            ("approve", "web"),
            ("approve", "web"),
            ("reject", "web"),
            ("reject", "telegram"),
            ("reject", "telegram"),
        ]

        # Each decision reached the agent exactly once.
        every = [c.id for c in release_cards + rollout_cards]
        await eventually(lambda: all(deployer.heard[i] >= 1 for i in every))
        assert all(deployer.heard[i] == 1 for i in every), deployer.heard

    trail = (await api(ada, "GET", "/audit"))["entries"]
    decided = {e["interactionId"]: e for e in trail if e["type"] == "interaction.resolved"}
    release_batch = {decided[c.id].get("batchId") for c in release_cards}
    rollout_batch = {decided[c.id].get("batchId") for c in rollout_cards[:3]}
    by_telegram = [decided[c.id] for c in rollout_cards[3:]]
    assert len(release_batch) == 1 and None not in release_batch
    assert len(rollout_batch) == 1 and None not in rollout_batch
    assert release_batch != rollout_batch
    assert all("batchId" not in e and e["via"] == "telegram" for e in by_telegram)
    statuses = await Interaction.filter(id__in=every).values_list("status", flat=True)
    assert set(statuses) == {InteractionStatus.RESOLVED}
    await ada.context.close()
