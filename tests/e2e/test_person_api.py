"""The person's side over real sockets against `lineup serve` in its own process.

register → log in → API token → pairing code → (an agent pairs) → confirm → conversation,
tracked message and task through the JSON API → the same events read from
``/events?after=`` and received live, in order, on ``/ws/client`` after a given sequence —
including an event another process wrote, which the socket fills in from the log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import websockets

from hub.core.agents.registry import redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.testing import HubProcess, opened

SECRET = "test-secret-key-" + "x" * 32  # what HubProcess gives the hub
PASSWORD = "correct horse battery"


async def frames(socket: Any, count: int) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        return [json.loads(await socket.recv()) for _ in range(count)]

    return await asyncio.wait_for(read(), timeout=15)


async def test_the_persons_side_end_to_end(database_url: str, tmp_path: Path) -> None:
    with HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET) as hub:
        async with httpx.AsyncClient(base_url=hub.url + "/api/v1", timeout=15) as browser:
            registered = await browser.post(
                "/auth/register",
                json={"email": "ops@example.com", "password": PASSWORD, "displayName": "Ops"},
            )
            assert registered.status_code == 201, registered.text
            workspace_id = registered.json()["workspaceId"]
            browser.cookies.clear()
            logged_in = await browser.post(
                "/auth/login", json={"email": "ops@example.com", "password": PASSWORD}
            )
            assert logged_in.status_code == 200 and "lineup_session" in logged_in.cookies
            created = await browser.post("/auth/tokens", json={"name": "e2e"})
            assert created.status_code == 201
            token = created.json()["token"]
            pairing = (await browser.post(f"/workspaces/{workspace_id}/pairing-codes")).json()
            assert pairing["command"].endswith(f"--pair {pairing['code']}")

        # The agent's side is the gateway's; here the pairing is redeemed through the core.
        async with opened(database_url):
            agent, _ = await redeem_pairing_code(
                pairing["code"],
                name="proposed",
                runtime="test",
                version="1",
                capabilities=[],
                secret_key=SECRET,
            )

        api = httpx.AsyncClient(
            base_url=f"{hub.url}/api/v1/workspaces/{workspace_id}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=15,
        )
        async with api:
            confirmed = await api.post(f"/agents/{agent.id}/confirm", json={"name": "builder"})
            assert confirmed.status_code == 200 and confirmed.json()["name"] == "builder"
            start = (await api.get("/events")).json()["lastSequence"]

            socket_url = (
                f"ws://127.0.0.1:{hub.port}/ws/client?workspace={workspace_id}&after={start}"
            )
            async with websockets.connect(
                socket_url, additional_headers={"Authorization": f"Bearer {token}"}
            ) as socket:
                [welcome] = await frames(socket, 1)
                assert welcome["type"] == "client.welcome"
                assert welcome["payload"]["lastSequence"] == start

                conversation = (
                    await api.post(
                        "/conversations", json={"title": "Site rebuild", "agentIds": [agent.id]}
                    )
                ).json()
                tracked = await api.post(
                    f"/conversations/{conversation['id']}/messages",
                    json={"content": "Tidy the dependencies", "trackAsTask": True},
                )
                assert tracked.status_code == 201
                task = tracked.json()["task"]
                plain = await api.post(
                    "/tasks", json={"title": "Write a plan", "targetAgentId": agent.id}
                )
                assert plain.status_code == 201

                live = await frames(socket, 4)
                assert [f["type"] for f in live] == [
                    "conversation.created",
                    "task.created",
                    "message.created",
                    "task.created",
                ]
                assert [f["sequence"] for f in live] == list(range(start + 1, start + 5))
                logged = (await api.get(f"/events?after={start}")).json()["events"]
                assert logged == live

                # Another process (here: this test) writes the agent's steps straight to
                # the log; the hub's bus never hears of them. The person's answer, made
                # through the hub, reveals the gap and the socket reads it from the log.
                interaction_id = new_id("interaction")
                async with opened(database_url):
                    by_agent = f"agent:{agent.id}"
                    await append_event(
                        workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent
                    )
                    await append_event(
                        workspace_id,
                        "interaction.requested",
                        {
                            "interaction": {
                                "id": interaction_id,
                                "type": "approval",
                                "title": "Install 3 dev dependencies?",
                                "risk": "high",
                            }
                        },
                        actor=by_agent,
                        task_id=task["id"],
                    )
                inbox = (await api.get("/inbox")).json()
                assert inbox["counts"]["waitingForMe"] == 1
                answered = await api.post(
                    f"/interactions/{interaction_id}/respond", json={"optionId": "approve"}
                )
                assert answered.status_code == 200 and answered.json()["via"] == "api"
                again = await api.post(
                    f"/interactions/{interaction_id}/respond", json={"optionId": "reject"}
                )
                assert again.status_code == 409
                assert again.json()["error"]["details"]["respondedByName"] == "Ops"

                steps = await frames(socket, 3)
                assert [f["type"] for f in steps] == [
                    "task.accepted",
                    "interaction.requested",
                    "interaction.resolved",
                ]
                assert [f["sequence"] for f in steps] == list(range(start + 5, start + 8))

            detail = (await api.get(f"/tasks/{task['id']}")).json()
            assert detail["status"] == "running"
            assert [e["type"] for e in detail["timeline"]] == [
                "task.created",
                "message.created",
                "task.accepted",
                "interaction.requested",
                "interaction.resolved",
            ]
            assert (await api.get("/openapi.json")).status_code == 404  # it lives at /api/
        async with httpx.AsyncClient(timeout=15) as plain_client:
            document = await plain_client.get(hub.url + "/api/openapi.json")
            assert (
                document.status_code == 200
                and "/api/v1/workspaces/{ws}/tasks" in (document.json()["paths"])
            )


async def test_concurrent_answers_over_real_sockets_one_wins(
    database_url: str, tmp_path: Path
) -> None:
    with HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET) as hub:
        async with httpx.AsyncClient(base_url=hub.url + "/api/v1", timeout=15) as browser:
            registered = await browser.post(
                "/auth/register", json={"email": "two@example.com", "password": PASSWORD}
            )
            workspace_id = registered.json()["workspaceId"]
            token = (await browser.post("/auth/tokens", json={"name": "e2e"})).json()["token"]
            interaction_id = new_id("interaction")
            async with opened(database_url):
                await append_event(
                    workspace_id,
                    "interaction.requested",
                    {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
                    actor="agent:agt_elsewhere",
                )
            url = f"/workspaces/{workspace_id}/interactions/{interaction_id}/respond"
            async with httpx.AsyncClient(
                base_url=hub.url + "/api/v1",
                headers={"Authorization": f"Bearer {token}"},
                timeout=15,
            ) as scripts:
                answers = await asyncio.gather(
                    browser.post(url, json={"optionId": "approve"}),
                    *(
                        scripts.post(url, json={"optionId": "reject" if n % 2 else "approve"})
                        for n in range(9)
                    ),
                )
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200] + [409] * 9
        [winner] = [a.json() for a in answers if a.status_code == 200]
        for late in (a.json()["error"] for a in answers if a.status_code == 409):
            assert late["code"] == "already_decided"
            assert late["details"]["via"] == winner["via"]
            assert late["details"]["respondedAt"] == winner["respondedAt"]
            assert late["details"]["response"] == winner["response"]
