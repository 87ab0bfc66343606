"""Search over the JSON API: what it finds and in which order, its pages, whose rows it
reads, and what it makes of queries that look like query syntax."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.work import search as searching
from tests.web.api.conftest import Person
from tests.web.api.test_work import agent_in


async def find(me: Person, q: str, extra: str = "") -> tuple[int, dict]:  # type: ignore[type-arg]
    return await me.get(f"/search?q={quote(q)}{extra}")


async def started_task(me: Person, agent_id: str, title: str) -> str:
    """A task its agent has accepted, so it may ask cards about it."""
    _, task = await me.post("/tasks", {"title": title, "targetAgentId": agent_id})
    await append_event(
        me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=f"agent:{agent_id}"
    )
    return str(task["id"])


async def ask_card(me: Person, agent_id: str, task_id: str, title: str, why: str = "") -> str:
    card = new_id("interaction")
    await append_event(
        me.workspace_id,
        "interaction.requested",
        {"interaction": {"id": card, "type": "approval", "title": title, "description": why}},
        actor=f"agent:{agent_id}",
        task_id=task_id,
    )
    return card


async def test_each_kind_is_found_with_its_page(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me, "Release captain")
    task = {"id": await started_task(me, agent.id, "Rotate the certificates")}
    _, conversation = await me.post("/conversations", {"title": "Ops", "agentIds": [agent.id]})
    _, posted = await me.post(
        f"/conversations/{conversation['id']}/messages",
        {"content": "The certificates expire on Friday", "targetAgentId": agent.id},
    )
    card = await ask_card(me, agent.id, task["id"], "Renew the certificates?", "They expire")

    status, found = await find(me, "certif")
    assert status == 200, found
    kinds = {item["id"]: item["kind"] for item in found["items"]}
    assert kinds == {task["id"]: "task", posted["message"]["id"]: "message", card: "card"}
    assert found["nextCursor"] is None
    by_id = {item["id"]: item for item in found["items"]}
    ws = me.workspace_id
    assert by_id[task["id"]]["url"] == f"http://hub.example.test/w/{ws}/tasks/{task['id']}"
    assert by_id[card]["url"].endswith(f"/w/{ws}/interactions/{card}")
    message = by_id[posted["message"]["id"]]
    assert message["url"].endswith(f"/w/{ws}/conversations/{conversation['id']}")
    assert message["title"] is None and "certificates" in message["text"]

    # An agent by any part of its name; a task by the start of its id.
    _, found = await find(me, "capt")
    assert [item["id"] for item in found["items"]] == [agent.id]
    assert found["items"][0]["kind"] == "agent" and found["items"][0]["title"] == agent.name
    _, found = await find(me, "lease cap")
    assert [item["id"] for item in found["items"]] == [agent.id]
    _, found = await find(me, task["id"][:12])
    assert task["id"] in [item["id"] for item in found["items"]]


async def test_the_better_match_comes_first(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    _, in_passing = await me.post(
        "/tasks",
        {
            "title": "Tidy the build",
            "description": "Also glance at the flaky database migration someday, among "
            "many other small things that have nothing to do with it at all",
            "targetAgentId": agent.id,
        },
    )
    _, about_it = await me.post(
        "/tasks", {"title": "Database migration", "targetAgentId": agent.id}
    )
    _, found = await find(me, "database migration")
    assert [item["id"] for item in found["items"]] == [about_it["id"], in_passing["id"]]


# The whole list ranked, and only its newest four: the rest on the pages after them.
@pytest.mark.parametrize("ranked", [searching.RANKED, 4])
async def test_pages_walk_every_hit_once(sign_up, monkeypatch, ranked: int) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(searching, "RANKED", ranked)
    me: Person = await sign_up()
    agent = await agent_in(me)
    made = set()
    for n in range(7):
        _, task = await me.post(
            "/tasks", {"title": f"Invoice batch {n} " + "invoice " * n, "targetAgentId": agent.id}
        )
        made.add(task["id"])
    # Another workspace's invoices, newer than all of mine, are none of my pages' hits.
    stranger: Person = await sign_up("stranger")
    their_agent = await agent_in(stranger)
    for n in range(5):
        await stranger.post("/tasks", {"title": f"Invoice {n}", "targetAgentId": their_agent.id})
    seen: list[str] = []
    cursor = ""
    while True:
        status, page = await find(me, "invoice", f"&limit=3{cursor}")
        assert status == 200 and len(page["items"]) <= 3
        seen.extend(item["id"] for item in page["items"])
        if page["nextCursor"] is None:
            break
        cursor = f"&cursor={page['nextCursor']}"
    assert len(seen) == len(set(seen)) and set(seen) == made

    status, refused = await find(me, "invoice", "&cursor=not-a-cursor")
    assert status == 400 and refused["error"]["code"] == "bad_cursor"
    _, tasks = await me.get("/tasks?limit=1")
    status, refused = await find(me, "invoice", f"&cursor={tasks['nextCursor']}")
    assert status == 400 and refused["error"]["code"] == "bad_cursor"
    status, refused = await find(me, "invoice", "&offset=3")
    assert status == 400 and refused["error"]["code"] == "unknown_parameter"


async def test_another_workspace_sees_nothing(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    stranger: Person = await sign_up("stranger")
    agent = await agent_in(me, "Secret keeper")
    await me.post("/tasks", {"title": "Confidential merger", "targetAgentId": agent.id})
    other_agent = await agent_in(stranger, "Secret keeper too")
    await stranger.post("/tasks", {"title": "Confidential lunch", "targetAgentId": other_agent.id})

    _, mine = await find(me, "confidential")
    assert [item["title"] for item in mine["items"]] == ["Confidential merger"]
    _, theirs = await find(stranger, "secret")
    assert [item["id"] for item in theirs["items"]] == [other_agent.id]
    # Their own token on my workspace's address: refused, never my rows.
    response = await stranger.client.get(
        f"/api/v1/workspaces/{me.workspace_id}/search?q=confidential", headers=stranger.headers
    )
    assert response.status_code in (403, 404)
    assert "merger" not in (await response.get_data(as_text=True))
    response = await me.client.get(f"/api/v1/workspaces/{me.workspace_id}/search?q=secret")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "*",
        "deploy*",
        "-deploy",
        "deploy NEAR(a b)",
        "NEAR",
        "a OR b AND NOT c",
        "title:deploy",
        "^deploy",
        "(deploy",
        "deploy) & !x | y:*",
        "'; DROP TABLE task; --",
        "100%_\\",
        "部署",
        "\u00a9\u2603",
    ],
)
async def test_query_syntax_is_plain_text(sign_up, query: str) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    await me.post("/tasks", {"title": "Deploy the 部署 service", "targetAgentId": agent.id})
    status, answer = await find(me, query)
    assert status in (200, 400), answer
    if status == 400:
        assert answer["error"]["code"] == "bad_search_query" and answer["error"]["hint"]
    else:
        assert isinstance(answer["items"], list)


async def test_a_nul_in_the_query_is_refused_as_everywhere(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    status, answer = await find(me, "x\u0000y")
    assert status == 422 and answer["error"]["code"] == "nul_character"


@pytest.mark.parametrize("query", ["", "   ", "---", "*" * 10, "w " * 9, "x" * 201])
async def test_a_query_with_nothing_to_find_is_refused(sign_up, query: str) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    status, answer = await find(me, query)
    assert status == 400 and answer["error"]["code"] == "bad_search_query"
    assert answer["error"]["details"]["parameter"] == "q"
    response = await me.client.get(me.url("/search"), headers=me.headers)
    assert response.status_code == 400


async def test_agent_content_comes_back_as_text(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me, "<script>alert(1)</script> helper")
    task_id = await started_task(me, agent.id, "Harmless")
    await ask_card(me, agent.id, task_id, "<img src=x onerror=alert(2)> approve?")
    _, found = await find(me, "alert")
    titles = sorted(item["title"] for item in found["items"])
    assert titles == ["<img src=x onerror=alert(2)> approve?", "<script>alert(1)</script> helper"]


async def test_a_renamed_agent_and_a_changed_task_are_found_by_their_new_words(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me, "Scout")
    task = {"id": await started_task(me, agent.id, "Survey")}
    await append_event(
        me.workspace_id,
        "task.status_changed",
        {"taskId": task["id"], "status": "succeeded", "summary": "Found three lighthouses"},
        actor=f"agent:{agent.id}",
    )
    _, found = await find(me, "lighthouse")
    assert [item["id"] for item in found["items"]] == [task["id"]]
    status, _ = await me.post(f"/agents/{agent.id}/confirm", {"name": "Pathfinder"})
    assert status == 200
    _, found = await find(me, "pathfinder")
    assert [item["id"] for item in found["items"]] == [agent.id]
    _, found = await find(me, "scout")
    assert found["items"] == []
