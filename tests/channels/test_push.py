"""Web Push end to end: a real hub process, an SDK agent asking, and a push service on
loopback that verifies each push's VAPID token and headers and decrypts it as a browser.

The lock screen's actions are what the service worker does with them: a POST to the
action's signed link, with no session.
"""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.core.ids import new_id
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import Notification
from hub.sdk import Agent
from hub.testing import eventually
from tests.channels.push_service import Browser, PushService
from tests.sdk.live import LiveHub, live_hub

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    # The push service runs on loopback, which outbound calls refuse unless allowed.
    async with live_hub(db, tmp_path / "hub", LINEUP_OUTBOUND_ALLOW_PRIVATE="1") as running:
        yield running


@pytest.fixture
async def agent(hub: LiveHub, tmp_path: Path) -> AsyncIterator[Agent]:
    async with hub.agent(tmp_path / "agent", "deployer") as agent:
        yield agent


async def subscribed(hub: LiveHub, service: PushService, device: str) -> Browser:
    browser = service.subscribe()
    body = {**browser.to_json(), "expirationTime": None, "device": device}
    response = await hub.http.post("/api/v1/me/push-subscriptions", json=body)
    assert response.status_code == 201, response.text
    return browser


async def pending_card(before: set[str]) -> Interaction:
    return await eventually(
        lambda: Interaction.filter(status=InteractionStatus.PENDING).exclude(id__in=before).first()
    )


def pushed(service: PushService, browser: Browser, kind: str) -> list[dict[str, Any]]:
    return [p for p in service.to(browser) if p["type"] == kind]


async def test_a_card_reaches_each_browser_and_is_answered_once_from_the_lock_screen(
    hub: LiveHub, agent: Agent, push_service: PushService
) -> None:
    key = (await hub.http.get("/api/v1/push/public-key")).json()["publicKey"]
    phone = await subscribed(hub, push_service, "Phone")
    laptop = await subscribed(hub, push_service, "Laptop")
    listed = (await hub.http.get("/api/v1/me/push-subscriptions")).json()["subscriptions"]
    assert [s["device"] for s in listed] == ["Phone", "Laptop"]
    assert all(s["pushService"] == "127.0.0.1" and "endpoint" not in s for s in listed)

    waiting = asyncio.create_task(
        agent.request_approval("Deploy the site?", impact="The site restarts.", risk="medium")
    )
    card = await pending_card(set())
    await eventually(
        lambda: pushed(push_service, phone, "card") and pushed(push_service, laptop, "card")
    )
    [shown] = pushed(push_service, phone, "card")
    assert shown["id"] == card.id and shown["title"] == "Deploy the site?"
    assert shown["body"] == "deployer · ⚠️ Medium risk"
    assert [a["title"] for a in shown["actions"]] == ["Approve", "Reject"]
    [request] = [r for r in push_service.received if r.browser == phone.id]
    assert request.vapid_key == key  # signed with the key browsers subscribed with
    assert request.headers["urgency"] == "normal" and request.headers["ttl"] == "86400"
    assert len(request.headers["topic"]) <= 32
    assert request.size < 4096

    # The lock screen's "Approve": the worker posts the action's link, with no session.
    async with httpx.AsyncClient(timeout=30) as worker:
        decided = await worker.post(shown["actions"][0]["url"])
        assert decided.status_code == 200
        answer = await asyncio.wait_for(waiting, 30)
        assert answer.option_id == "approve" and answer.via == "push"
        again = await worker.post(shown["actions"][1]["url"])  # the other option, later
        assert again.status_code == 409  # decided already: nothing changes
        replay = await worker.post(shown["actions"][0]["url"])
        assert replay.status_code == 410  # a used link is refused
    assert (await Interaction.get(id=card.id)).responded_via == "push"

    # Decided: its notification closes on every device.
    await eventually(
        lambda: pushed(push_service, phone, "close") and pushed(push_service, laptop, "close")
    )
    assert pushed(push_service, laptop, "close") == [{"type": "close", "id": card.id}]
    assert push_service.refused == []


async def test_a_high_risk_card_opens_on_the_phone_and_a_gone_browser_is_dropped(
    hub: LiveHub, agent: Agent, push_service: PushService
) -> None:
    phone = await subscribed(hub, push_service, "Phone")
    old_tablet = await subscribed(hub, push_service, "Old tablet")
    push_service.gone(old_tablet)  # its push service forgot it: 410
    waiting = asyncio.create_task(
        agent.request_approval("Drop the staging database?", risk="high", impact="Gone for good.")
    )
    card = await pending_card(set())
    await eventually(lambda: pushed(push_service, phone, "card"))
    [shown] = pushed(push_service, phone, "card")
    assert shown["actions"] == []  # the second, deliberate step is on the card's page
    assert "⛔ High risk" in shown["body"]
    [request] = [r for r in push_service.received if r.browser == phone.id]
    assert request.headers["urgency"] == "high"

    async def devices() -> list[str]:
        listed = (await hub.http.get("/api/v1/me/push-subscriptions")).json()
        return [s["device"] for s in listed["subscriptions"]]

    await eventually(lambda: _equals(devices(), ["Phone"]))
    async with httpx.AsyncClient(timeout=30) as phone_browser:
        page = await phone_browser.get(shown["url"])  # the card, with its confirmation form
        assert page.status_code == 200 and "Drop the staging database?" in page.text
    waiting.cancel()
    assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING


async def test_subscriptions_are_checked_private_and_tested_on_request(
    hub: LiveHub, push_service: PushService
) -> None:
    browser = push_service.subscribe()
    bad = {
        **browser.to_json(),
        "keys": {"p256dh": "AAAA", "auth": browser.to_json()["keys"]["auth"]},
    }
    refused = await hub.http.post("/api/v1/me/push-subscriptions", json=bad)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_push_subscription"
    assert (await hub.http.get("/api/v1/me/push-subscriptions")).json()["subscriptions"] == []

    phone = await subscribed(hub, push_service, "Phone")
    [row] = (await hub.http.get("/api/v1/me/push-subscriptions")).json()["subscriptions"]
    tested = await hub.http.post(f"/api/v1/me/push-subscriptions/{row['id']}/test")
    assert tested.status_code == 202, tested.text
    [notice] = pushed(push_service, phone, "notice")
    assert notice["title"] == "LineUp Hub" and notice["body"] == "Push works in this browser."

    removed = await hub.http.delete(f"/api/v1/me/push-subscriptions/{row['id']}")
    assert removed.status_code == 204
    again = await hub.http.delete(f"/api/v1/me/push-subscriptions/{row['id']}")
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "push_subscription_not_found"


async def _equals(value: Any, expected: Any) -> bool:
    return bool(await value == expected)


async def test_rotating_the_keys_ends_every_subscription(
    hub: LiveHub, push_service: PushService
) -> None:
    before = (await hub.http.get("/api/v1/push/public-key")).json()["publicKey"]
    await subscribed(hub, push_service, "Phone")
    key_file = hub.process.data_dir / "vapid_private.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    await asyncio.to_thread(hub.process.stop)
    rotated = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "hub.cli", "push", "rotate-keys"],
        env=hub.process.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rotated.returncode == 0, rotated.stderr
    assert "1 browser subscription(s) ended" in rotated.stderr
    await asyncio.to_thread(hub.process.start)
    after = (await hub.http.get("/api/v1/push/public-key")).json()["publicKey"]
    assert after != before and after in rotated.stdout
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert (await hub.http.get("/api/v1/me/push-subscriptions")).json()["subscriptions"] == []


async def test_a_failed_task_is_pushed_with_its_reason(
    hub: LiveHub, agent: Agent, push_service: PushService
) -> None:
    phone = await subscribed(hub, push_service, "Phone")
    task_id = new_id("task")
    await agent.send("task.created", {"taskId": task_id, "title": "Nightly backup"})
    await agent.send("task.accepted", {"taskId": task_id}, task_id=task_id)
    await agent.send(
        "task.status_changed",
        {"taskId": task_id, "status": "failed", "error": "disk full"},
        task_id=task_id,
    )
    await eventually(lambda: pushed(push_service, phone, "notice"))
    [notice] = pushed(push_service, phone, "notice")
    assert notice["title"] == "The task “Nightly backup” by deployer failed."
    assert notice["body"] == "Reason: disk full"
    assert notice["url"].endswith(f"/w/{hub.workspace_id}/tasks/{task_id}")


async def test_a_push_service_outage_delays_a_card_and_never_loses_or_doubles_it(
    hub: LiveHub, agent: Agent, push_service: PushService
) -> None:
    phone = await subscribed(hub, push_service, "Phone")
    push_service.fail_next(2)
    waiting = asyncio.create_task(agent.request_approval("Rotate the keys?", risk="low"))
    card = await pending_card(set())
    await eventually(lambda: pushed(push_service, phone, "card"), within=60)
    assert push_service.failed == 2  # tried, refused twice, then taken
    row = await eventually(
        lambda: Notification.filter(interaction_id=card.id, surface="push", status="sent").first()
    )
    assert row.attempts == 3  # two refused, the third taken
    # The row is done: the outbox sends it no more, and the service took it once.
    assert len(pushed(push_service, phone, "card")) == 1
    waiting.cancel()
