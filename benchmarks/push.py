"""The time from an agent's card to its push leaving the hub, beside the live web surface.

A real hub process, an SDK agent asking cards one after another, and the person's browser
subscribed at a push service on loopback (``tests/channels/push_service.py``, which
verifies and decrypts each push as a real one would). Measured per card, from just before
the agent sends it: when the push service has the push (the outbox's claim, the card
rendered, encrypted and signed, the request sent) and, the floor of the same run, when the
person's client socket (an open tab) has the card.

The hub holds a new card ``LINEUP_NOTIFY_AFTER_S`` (2 s by default) before email, Telegram
and push, so that a card answered at once sends nothing; that hold is set to 0 here, so
the figure is what the path itself costs. ``python -m benchmarks.push`` on SQLite, or on
PostgreSQL when ``LINEUP_TEST_DATABASE_URL`` names a server (``make bench`` runs both).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

from benchmarks.databases import on_a_fresh_database
from benchmarks.stats import ratio, summary
from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import create_api_token, create_user
from hub.sdk import Agent
from hub.sdk.backoff import Backoff
from hub.testing import HubProcess, eventually, opened
from tests.channels.push_service import PushService

CARDS = 60


async def measure() -> dict[str, Any]:
    return await on_a_fresh_database(_measure)


async def _measure(url: str, root: Path) -> dict[str, Any]:
    async with opened(url):
        user, workspace = await create_user("bench@example.com", "correct horse", "Bench")
        _, token = await create_api_token(user, "bench")
    service = PushService()
    await service.start()
    hub = HubProcess(
        url, root / "hub", LINEUP_OUTBOUND_ALLOW_PRIVATE="1", LINEUP_NOTIFY_AFTER_S="0"
    )
    await asyncio.to_thread(hub.start)
    asked: list[asyncio.Task[Any]] = []
    try:
        async with opened(url):
            code, _ = await create_pairing_code(
                workspace.id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
            )
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=hub.url, headers=headers, timeout=30) as http:
            browser = service.subscribe()
            added = await http.post("/api/v1/me/push-subscriptions", json=browser.to_json())
            added.raise_for_status()
            agent = Agent(
                hub.url,
                state_dir=root / "agent",
                backoff=Backoff(initial_s=0.05, maximum_s=0.5),
                pairing_code=code,
                name="bench",
            )
            async with agent:
                await http.post(
                    f"/api/v1/workspaces/{workspace.id}/agents/{agent.agent_id}/confirm",
                    json={"name": "bench"},
                )
                address = hub.url.replace("http://", "ws://")
                socket_url = f"{address}/ws/client?workspace={workspace.id}&after=0"
                async with websockets.connect(socket_url, additional_headers=headers) as tab:
                    push_ms, tab_ms = [], []
                    for n in range(CARDS + 3):  # the first three warm the path up
                        started = time.perf_counter()
                        seen = len(service.received)
                        asked.append(
                            asyncio.create_task(agent.request_approval(f"Card {n}", risk="medium"))
                        )
                        await _card_on(tab)
                        on_tab = time.perf_counter()
                        # The arrival's own time is kept (Received.at): how often this
                        # looks does not change the figure.
                        await eventually(lambda s=seen: len(service.received) > s, every=0.005)
                        if n >= 3:
                            tab_ms.append((on_tab - started) * 1000)
                            push_ms.append((service.received[-1].at - started) * 1000)
    finally:
        for task in asked:
            task.cancel()
        await asyncio.gather(*asked, return_exceptions=True)
        await asyncio.to_thread(hub.stop)
        await service.stop()
    result: dict[str, Any] = {
        "backend": "postgres" if url.startswith("postgres") else "sqlite",
        "tab_ms": summary(tab_ms),
        "push_ms": summary(push_ms),
        "refused": len(service.refused),
    }
    result["push_over_tab_p95"] = round(ratio(result["push_ms"]["p95"], result["tab_ms"]["p95"]), 2)
    return result


async def _card_on(tab: Any) -> None:
    while True:
        frame = json.loads(await asyncio.wait_for(tab.recv(), 30))
        if frame.get("type") == "interaction.requested":
            return


def main() -> int:
    result = asyncio.run(measure())
    print(
        f"push ({result['backend']}): card on an open tab p95 {result['tab_ms']['p95']:.1f} ms; "
        f"its push at the push service p95 {result['push_ms']['p95']:.1f} ms "
        f"({result['push_over_tab_p95']}x); {result['refused']} pushes refused"
    )
    out = Path(__file__).with_name(f"results-push-{result['backend']}.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
