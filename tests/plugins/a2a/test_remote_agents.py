"""Adding remote agents: the card shown, only added or pinned agents listed, keys sealed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hub.core.store.models import Event
from hub.core.store.remote_models import RemoteAgent
from tests.plugins.a2a.conftest import SECRET, Hubs, Person, sign_up
from tests.plugins.a2a.peers import Instant, serve_remote


async def test_adding_by_url_shows_the_card_and_lists_it_as_an_a2a_agent(person: Person) -> None:
    async with serve_remote(Instant(), name="Painter") as remote:
        agent = await person.add_remote(remote.url)
    assert agent["name"] == "Painter"
    assert agent["runtime"] == "a2a"
    assert agent["status"] == "online"
    card = agent["remote"]["card"]
    assert card["version"] == "1.2.3"
    assert card["streaming"] is True
    assert card["skills"] == [
        {"id": "paint", "name": "Paint buttons", "description": "Paints.", "tags": ["ui"]}
    ]
    _, listed = await person.get("/agents")
    assert [(a["id"], a["runtime"]) for a in listed["agents"]] == [(agent["id"], "a2a")]
    _, remotes = await person.get("/remote-agents")
    assert [a["id"] for a in remotes["agents"]] == [agent["id"]]


async def test_a_card_stored_before_pushes_were_read_learns_them_when_added_again(
    person: Person,
) -> None:
    async with serve_remote(Instant(), streaming=False, push=True) as remote:
        agent = await person.add_remote(remote.url)
        assert agent["remote"]["card"]["pushNotifications"] is True
        stored = await RemoteAgent.get(id=agent["id"])
        older = {k: v for k, v in stored.card.items() if k != "pushNotifications"}
        await RemoteAgent.filter(id=agent["id"]).update(card=older, endpoint_url="http://kept")
        again = await person.add_remote(remote.url)
    assert again["remote"]["card"] == {**older, "pushNotifications": True}
    assert (await RemoteAgent.get(id=agent["id"])).endpoint_url == "http://kept"


async def test_adding_the_same_url_again_returns_the_same_agent(person: Person) -> None:
    async with serve_remote(Instant()) as remote:
        first = await person.add_remote(remote.url)
        again = await person.add_remote(remote.url + "/", pin=True)
        third = await person.add_remote(remote.url)
    assert first["id"] == again["id"] == third["id"]
    _, listed = await person.get("/agents")
    assert len(listed["agents"]) == 1
    assert again["remote"]["pinned"] is True and third["remote"]["pinned"] is True


async def test_nobody_sees_a_remote_they_did_not_add_or_pin(hub: Any, person: Person) -> None:
    other = await sign_up(hub, "other")
    async with serve_remote(Instant()) as remote:
        await person.add_remote(remote.url)
    for path in ("/agents", "/remote-agents"):
        status, body = await other.get(path)
        assert status == 200
        assert body["agents"] == []


async def test_a_card_that_lists_other_agents_adds_only_itself(person: Person) -> None:
    async with serve_remote(Instant()) as remote:
        card = {
            "name": "Registry",
            "url": remote.url + "/a2a",
            "protocolVersion": "0.3.0",
            "agents": [{"name": f"listed {n}", "url": f"https://a{n}.example"} for n in range(200)],
            "skills": [{"id": f"s{n}", "name": f"skill {n}"} for n in range(500)],
        }
        async with serve_remote(Instant(), card=card) as registry:
            agent = await person.add_remote(registry.url)
    _, listed = await person.get("/agents")
    assert [a["id"] for a in listed["agents"]] == [agent["id"]]
    assert len(agent["remote"]["card"]["skills"]) == 20


async def test_pinned_in_configuration_appears_in_its_workspace_only(
    hubs: Hubs,
) -> None:
    async with serve_remote(Instant(), name="Pinned one") as remote:
        first = await hubs.start()
        person = await sign_up(first, "pinner")
        other = await sign_up(first, "bystander")
        second = await hubs.start(
            a2a_pinned=[{"url": remote.url, "workspace": person.workspace_id}]
        )
        person.client, other.client = second.test_client(), second.test_client()

        async def listed(who: Person) -> list[dict[str, Any]]:
            _, body = await who.get("/agents")
            return body["agents"]  # type: ignore[no-any-return]

        for _ in range(200):
            if await listed(person):
                break
            await asyncio.sleep(0.05)
        [agent] = await listed(person)
        assert agent["name"] == "Pinned one" and agent["runtime"] == "a2a"
        assert await listed(other) == []
        _, remotes = await person.get("/remote-agents")
        assert remotes["agents"][0]["remote"]["pinned"] is True


async def test_loopback_is_refused_unless_the_operator_allows_it(
    hubs: Hubs,
) -> None:
    app = await hubs.start(outbound_allow_private=False)
    person = await sign_up(app)
    async with serve_remote(Instant()) as remote:
        status, body = await person.post("/remote-agents", {"url": remote.url})
        assert remote.requests == []  # refused before a single byte went out
    assert status == 422
    assert body["error"]["code"] == "outbound_address_refused"
    assert "LINEUP_OUTBOUND_ALLOW_PRIVATE" in body["error"]["hint"]
    status, body = await person.post("/remote-agents", {"url": "file:///etc/passwd"})
    assert status == 422 and body["error"]["code"] == "outbound_address_refused"


async def test_the_connector_is_off_by_default(hubs: Hubs) -> None:
    app = await hubs.start(a2a_enabled=False)
    person = await sign_up(app)
    status, body = await person.post("/remote-agents", {"url": "https://agent.example"})
    assert status == 404
    assert body["error"]["code"] == "a2a_disabled"
    assert "LINEUP_A2A_ENABLED" in body["error"]["hint"]


async def test_a_key_is_sent_as_the_card_asks_sealed_at_rest_and_never_shown(
    person: Person,
) -> None:
    key = "sk-remote-" + "9" * 24
    async with serve_remote(Instant()) as base:
        card = {
            "name": "Keyed",
            "url": base.url + "/a2a",
            "protocolVersion": "0.3.0",
            "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}},
        }
        async with serve_remote(Instant(), card=card) as remote:
            agent = await person.add_remote(remote.url, secret=key)
            # The card sends calls to ``base``; that server sees the key.
            task_id = await person.task_for(agent["id"])
            await person.wait_task(task_id, lambda d: d["status"] == "succeeded")
    calls = [r for r in base.requests if r["path"] == "/a2a"]
    assert calls and all(r["headers"].get("x-api-key") == key for r in calls)
    assert agent["remote"]["authentication"] == "header:X-Api-Key"
    assert agent["remote"]["hasSecret"] is True
    _, remotes = await person.get("/remote-agents")
    _, events = await person.get("/events?after=0")
    row = await RemoteAgent.get(id=agent["id"])
    stored = json.dumps([remotes, events, row.card, [e.payload for e in await Event.all()]])
    assert key not in stored
    assert row.secret_sealed and key not in row.secret_sealed
    from hub.core.people.sealing import unseal

    assert unseal(row.secret_sealed, SECRET) == key


async def test_a_bearer_token_from_a_v1_card(person: Person) -> None:
    async with serve_remote(Instant()) as base:
        card = {
            "name": "Bearer",
            "supportedInterfaces": [
                {"url": base.url + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        }
        async with serve_remote(Instant(), card=card) as remote:
            agent = await person.add_remote(remote.url, secret="tok-123")
            task_id = await person.task_for(agent["id"])
            await person.wait_task(task_id, lambda d: d["status"] == "succeeded")
    calls = [r for r in base.requests if r["path"] == "/a2a"]
    assert calls and all(r["headers"].get("authorization") == "Bearer tok-123" for r in calls)
