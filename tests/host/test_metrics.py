"""The metrics a dashboard reads, moving as a real hub process serves real traffic."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from hub.core.store.models import Interaction, InteractionStatus
from hub.sdk.adapters import demo
from hub.testing import eventually
from tests.channels.peers import SmtpPeer
from tests.sdk.live import LiveHub, live_hub

METRICS_TOKEN = "scrape-" + "m" * 24


@pytest.fixture
async def hub(db: str, tmp_path: Path, smtp: SmtpPeer) -> AsyncIterator[LiveHub]:
    env = {
        "LINEUP_SMTP_URL": smtp.url,
        "LINEUP_METRICS_TOKEN": METRICS_TOKEN,
        "LINEUP_LOG_FORMAT": "json",
    }
    async with live_hub(db, tmp_path / "hub", **env) as running:
        yield running


async def scrape(hub: LiveHub) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(
            hub.url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
    assert response.status_code == 200, response.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_every_series_moves_with_requests_agents_cards_and_deliveries(
    hub: LiveHub, smtp: SmtpPeer, tmp_path: Path
) -> None:
    before = await scrape(hub)
    for name in ("process_cpu_seconds_total", "python_gc_collections_total"):
        assert any(key[0] == name for key in before), name
    route = "/api/v1/workspaces/<ws>/tasks"
    await hub.api("GET", "/tasks")
    after_request = await scrape(hub)
    http = dict(method="GET", route=route, status="200")
    assert value(after_request, "lineup_http_requests_total", **http) == 1
    assert (
        value(
            after_request, "lineup_http_request_duration_seconds_count", method="GET", route=route
        )
        == 1
    )
    assert not any(hub.workspace_id in str(key) for key in after_request)  # rules, not paths
    assert value(after_request, "lineup_database_pool_size") >= 1
    assert value(after_request, "lineup_metrics_database_read") == 1

    async with hub.agent(tmp_path / "agent", "Demo") as agent:
        demo.install(agent, pause_s=0, say=lambda line: None)
        connected = await scrape(hub)
        assert value(connected, "lineup_agents_connected") == 1
        task_id = await hub.task(agent.agent_id or "", "Tidy the dependencies")
        card = await eventually(
            lambda: Interaction.get_or_none(task_id=task_id, status=InteractionStatus.PENDING)
        )
        asked = await scrape(hub)
        assert value(asked, "lineup_cards_pending") == 1
        await hub.respond(card.id, "approve")

        async def decided() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
            samples = await scrape(hub)
            return samples if value(samples, "lineup_card_decision_seconds_count") == 1 else {}

        done = await eventually(decided, within=10)
        assert value(done, "lineup_cards_pending") == 0
        assert value(done, "lineup_events_appended_total", family="interaction") > value(
            before, "lineup_events_appended_total", family="interaction"
        )
    gone = await scrape(hub)
    assert value(gone, "lineup_agents_connected") == 0
    sent_before = value(gone, "lineup_outbox_notifications", channel="email", status="sent")

    await hub.api("POST", "/invitations", {"role": "member", "email": "mia@example.com"})
    await eventually(lambda: smtp.to("mia@example.com"))

    async def delivered() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        samples = await scrape(hub)
        sent = value(samples, "lineup_outbox_notifications", channel="email", status="sent")
        return samples if sent == sent_before + 1 else {}

    outbox = await eventually(delivered, within=10)
    assert value(outbox, "lineup_outbox_notifications", channel="email", status="pending") == 0


@pytest.mark.same_on_every_database
async def test_metrics_need_the_bearer_token_when_one_is_set(hub: LiveHub) -> None:
    async with httpx.AsyncClient(base_url=hub.url, timeout=10) as client:
        assert (await client.get("/metrics")).status_code == 401
        wrong = await client.get("/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
    assert await scrape(hub)


@pytest.mark.same_on_every_database
async def test_json_log_lines_carry_the_request_id_the_response_echoes(hub: LiveHub) -> None:
    mine = await hub.http.get(
        f"/api/v1/workspaces/{hub.workspace_id}/tasks?conversationId=kept-out-of-the-log",
        headers={"X-Request-Id": "trace-from-the-proxy-1"},
    )
    assert mine.headers["X-Request-Id"] == "trace-from-the-proxy-1"
    odd = await hub.http.get("/healthz", headers={"X-Request-Id": "no spaces\tor tabs"})
    generated = odd.headers["X-Request-Id"]
    assert generated != "no spaces\tor tabs" and len(generated) == 32

    def access_lines() -> list[dict[str, str]]:
        lines = [
            json.loads(line) for line in hub.process.log().splitlines() if line.startswith("{")
        ]
        return [line for line in lines if line["logger"] == "hub.access"]

    lines = await eventually(lambda: len(access_lines()) >= 2 and access_lines())
    by_id = {line.get("requestId"): line for line in lines}
    line = by_id["trace-from-the-proxy-1"]
    assert set(line) >= {"time", "level", "logger", "message", "requestId"}
    assert "GET /api/v1/workspaces/<ws>/tasks 200" in line["message"]
    assert generated in by_id
    assert "kept-out-of-the-log" not in hub.process.log()
