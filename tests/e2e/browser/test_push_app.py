"""The installed app in Chromium: installable, its service worker turning the hub's pushes
into notifications, a tap on one deciding the card once, a decided card's notification
closing, and the inbox opening from the worker's copy when the hub is unreachable.

Headless Chromium cannot subscribe to a real push service offline, so the chain is closed
by hand where the internet would be: the person's subscription is the loopback push
service's (which verifies and decrypts what the hub sends), and each push it decrypted is
handed to Chromium's worker through the DevTools protocol
(``ServiceWorker.deliverPushMessage``), as Chromium's push service would deliver it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from hub.core.agents.pairing import create_pairing_code
from hub.core.store.models import Interaction, InteractionStatus
from hub.sdk import Agent
from hub.sdk.backoff import Backoff
from hub.testing import HubProcess, eventually
from tests.channels.push_service import PushService
from tests.e2e.browser.conftest import CHROMIUM, CHROMIUM_ARGS, PASSWORD, WAIT_MS, Person

pytestmark = pytest.mark.timeout(120)

NOTIFICATIONS = """async () => {
  const registration = await navigator.serviceWorker.ready;
  const shown = await registration.getNotifications();
  return shown.map((n) => ({title: n.title, body: n.body, tag: n.tag,
                            actions: n.actions.map((a) => a.title)}));
}"""


@pytest.fixture
def hub(database_url: str, tmp_path: Path) -> Iterator[HubProcess]:
    # The push service runs on loopback, which outbound calls refuse unless allowed.
    with HubProcess(database_url, tmp_path / "hub", LINEUP_OUTBOUND_ALLOW_PRIVATE="1") as process:
        try:
            yield process
        finally:
            print(process.log()[-4000:])


@pytest.fixture
async def agent(hub: HubProcess, orm: str, tmp_path: Path, ada: Person) -> AsyncIterator[Agent]:
    code, _ = await create_pairing_code(
        ada.workspace_id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
    )
    agent = Agent(
        hub.url,
        state_dir=tmp_path / "agent",
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        pairing_code=code,
        name="deployer",
    )
    async with agent:
        assert agent.agent_id
        confirmed = await ada.context.request.post(
            f"{hub.url}/api/v1/workspaces/{ada.workspace_id}/agents/{agent.agent_id}/confirm",
            data={"name": "deployer"},
            headers={"Origin": hub.url},
        )
        assert confirmed.ok, await confirmed.text()
        yield agent


@pytest.fixture
async def ada(hub: HubProcess, tmp_path: Path) -> AsyncIterator[Person]:
    """Ada in a browser profile of her own: Chromium calls no incognito window installable,
    and a fresh context is one."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (make test installs it)")
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
            locale="en-GB",
        )
        try:
            context.set_default_timeout(WAIT_MS)
            await context.grant_permissions(["notifications"], origin=hub.url)
            registered = await context.request.post(
                f"{hub.url}/api/v1/auth/register",
                data={"email": "ada@example.com", "password": PASSWORD, "displayName": "Ada"},
            )
            assert registered.status == 201, await registered.text()
            body = await registered.json()
            page = context.pages[0] if context.pages else await context.new_page()
            yield Person(context, page, hub, "ada@example.com", body["userId"], body["workspaceId"])
        finally:
            await context.close()


async def deliver(cdp: Any, hub: HubProcess, registration: str, payload: dict[str, Any]) -> None:
    await cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": hub.url, "registrationId": registration, "data": json.dumps(payload)},
    )


async def shown_after_delivery(
    page: Any, cdp: Any, hub: HubProcess, registration: str, payload: dict[str, Any], count: int
) -> list[dict[str, Any]]:
    """Deliver ``payload`` until ``count`` notifications show: a worker still starting up
    may miss a delivery, as a phone waking up may, and a push shown twice is one (its tag)."""

    async def shown() -> tuple[list[dict[str, Any]]] | None:
        await deliver(cdp, hub, registration, payload)
        await asyncio.sleep(0.2)
        notifications: list[dict[str, Any]] = await page.evaluate(NOTIFICATIONS)
        # In a tuple, so that none shown (an empty list) still counts as come true.
        return (notifications,) if len(notifications) == count else None

    return (await eventually(shown))[0]


async def test_the_app_installs_and_a_pushed_card_is_answered_once_from_its_notification(
    hub: HubProcess, ada: Person, agent: Agent, push_service: PushService
) -> None:
    page = ada.page
    cdp = await ada.context.new_cdp_session(page)
    registrations: list[str] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: registrations.extend(
            r["registrationId"] for r in event["registrations"] if not r["isDeleted"]
        ),
    )
    await cdp.send("ServiceWorker.enable")
    await page.goto(ada.url("/inbox"))
    await page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    await page.reload()  # now controlled by the worker, which keeps this inbox

    # Chromium's own checks: the manifest parses and the app is installable.
    manifest = await cdp.send("Page.getAppManifest")
    assert manifest.get("errors") == [], manifest
    installable = await cdp.send("Page.getInstallabilityErrors")
    assert installable["installabilityErrors"] == [], installable
    await eventually(lambda: registrations)

    # This browser's subscription, at the loopback push service.
    browser = push_service.subscribe()
    added = await ada.context.request.post(
        f"{hub.url}/api/v1/me/push-subscriptions",
        data={**browser.to_json(), "device": "Chromium"},
        headers={"Origin": hub.url},
    )
    assert added.status == 201, await added.text()

    waiting = asyncio.create_task(agent.request_approval("Deploy the site?", risk="medium"))
    card = await eventually(lambda: Interaction.filter(status=InteractionStatus.PENDING).first())
    pushed = await eventually(lambda: [p for p in push_service.to(browser) if p["type"] == "card"])
    registration = registrations[-1]
    shown = await shown_after_delivery(page, cdp, hub, registration, pushed[0], 1)
    assert shown == [
        {
            "title": "Deploy the site?",
            "body": "deployer · ⚠️ Medium risk",
            "tag": card.id,
            "actions": ["Approve", "Reject"],
        }
    ]

    # A tap on "Approve", through the worker's own handler: the card is decided, once.
    [worker] = ada.context.service_workers
    tap = """async (action) => {
      const [notification] = await self.registration.getNotifications();
      return handleClick(notification, action);
    }"""
    assert await worker.evaluate(tap, "option-0") == "decided"
    answer = await asyncio.wait_for(waiting, 30)
    assert answer.option_id == "approve" and answer.via == "push"

    # The card's close push closes the notification (shown again first, as a phone that
    # never opened it would still show it).
    await shown_after_delivery(page, cdp, hub, registration, pushed[0], 1)
    closing = await eventually(
        lambda: [p for p in push_service.to(browser) if p["type"] == "close"]
    )
    await shown_after_delivery(page, cdp, hub, registration, closing[0], 0)
    assert (await Interaction.get(id=card.id)).responded_via == "push"

    # The hub goes away: the installed app still opens its inbox, and says it is offline.
    await asyncio.to_thread(hub.stop)
    await page.goto(ada.url("/inbox"))
    assert await page.locator("h1").first.inner_text()
    await page.locator("[data-live-state]", has_text="Offline").wait_for()
