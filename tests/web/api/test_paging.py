"""Every list pages by an opaque cursor: walking the pages while new items arrive loses and
repeats nothing, a changed cursor is refused, and so is a parameter the list does not take."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hub.core.ids import new_id
from hub.core.log.events import append_event
from tests.web.api.conftest import Person
from tests.web.api.test_work import agent_in

Add = Callable[[int], Awaitable[Any]]


async def walk(me: Person, path: str, key: str, add: Add, *, limit: int = 3) -> list[str]:
    """Every id the list gives, page by page, adding one new item between two pages."""
    seen: list[str] = []
    cursor: str | None = None
    round_ = 0
    while True:
        sep = "&" if "?" in path else "?"
        query = f"{path}{sep}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        status, page = await me.get(query)
        assert status == 200, page
        assert len(page[key]) <= limit
        seen.extend(item["id"] for item in page[key])
        cursor = page["nextCursor"]
        if cursor is None:
            return seen
        round_ += 1
        await add(100 + round_)


async def test_every_list_walks_whole_while_items_arrive(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    _, conversation = await me.post("/conversations", {"title": "Thread", "agentIds": [agent.id]})
    thread = conversation["id"]

    async def add_task(n: int) -> str:
        _, task = await me.post("/tasks", {"title": f"t{n}", "targetAgentId": agent.id})
        return str(task["id"])

    async def add_conversation(n: int) -> str:
        _, made = await me.post("/conversations", {"title": f"c{n}", "agentIds": [agent.id]})
        return str(made["id"])

    async def add_message(n: int) -> str:
        _, posted = await me.post(
            f"/conversations/{thread}/messages", {"content": f"m{n}", "targetAgentId": agent.id}
        )
        return str(posted["message"]["id"])

    async def add_agent(n: int) -> str:
        return (await agent_in(me, f"agent {n}")).id

    tasks = [await add_task(n) for n in range(8)]
    conversations = [thread, *[await add_conversation(n) for n in range(7)]]
    messages = [await add_message(n) for n in range(8)]
    agents = [agent.id, *[await add_agent(n) for n in range(7)]]

    walked = await walk(me, "/tasks", "tasks", add_task)
    assert sorted(walked) == sorted(tasks) and len(walked) == len(set(walked))
    assert walked == list(reversed(tasks))  # newest first
    walked = await walk(me, "/tasks?status=active", "tasks", add_task)
    assert sorted(walked) == sorted(tasks + [w for w in walked if w not in tasks])
    walked = await walk(me, "/conversations", "conversations", add_conversation)
    assert sorted(walked) == sorted(conversations)
    walked = await walk(me, "/agents", "agents", add_agent)
    assert sorted(walked) == sorted(agents) and walked == list(reversed(agents))

    # Messages: each page reads oldest first; its cursor leads to the earlier messages.
    seen: list[list[str]] = []
    cursor = ""
    while True:
        _, page = await me.get(f"/conversations/{thread}/messages?limit=3{cursor}")
        seen.append([m["id"] for m in page["messages"]])
        if page["nextCursor"] is None:
            break
        cursor = f"&cursor={page['nextCursor']}"
        await add_message(len(seen) + 200)
    assert [m for p in reversed(seen) for m in p] == messages


async def test_the_audit_trail_pages_in_log_order(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    tasks = [
        (await me.post("/tasks", {"title": f"t{n}", "targetAgentId": agent.id}))[1]
        for n in range(6)
    ]

    async def cancel(n: int) -> None:
        await me.post(f"/tasks/{tasks[n]['id']}/cancel", {"reason": f"r{n}"})

    for n in range(3):
        await cancel(n)
    _, whole = await me.get("/audit")
    expected = [e["sequence"] for e in whole["entries"]]
    assert whole["nextCursor"] is None and whole["hasMore"] is False
    seen: list[int] = []
    cursor = ""
    for n in range(3, 6):
        _, page = await me.get(f"/audit?limit=2{cursor}")
        seen.extend(e["sequence"] for e in page["entries"])
        await cancel(n)  # a new entry lands at the end, after the cursor
        cursor = f"&cursor={page['nextCursor']}"
    while cursor:
        _, page = await me.get(f"/audit?limit=2{cursor}")
        seen.extend(e["sequence"] for e in page["entries"])
        cursor = f"&cursor={page['nextCursor']}" if page["nextCursor"] else ""
    assert seen[: len(expected)] == expected and seen == sorted(set(seen))
    assert len(seen) == len(expected) + 3  # the three that came while walking, too


async def test_the_inbox_pages_each_section(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    _, task = await me.post("/tasks", {"title": "Deploy", "targetAgentId": agent.id})
    by_agent = f"agent:{agent.id}"
    await append_event(me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent)

    async def ask(n: int) -> str:
        card = new_id("interaction")
        await append_event(
            me.workspace_id,
            "interaction.requested",
            {"interaction": {"id": card, "type": "approval", "title": f"Ship {n}?"}},
            actor=by_agent,
            task_id=task["id"],
        )
        return card

    cards = [await ask(n) for n in range(5)]
    _, box = await me.get("/inbox?limit=2")
    assert [i["interaction"]["id"] for i in box["waitingForMe"]] == cards[:2]  # oldest first
    assert box["counts"]["waitingForMe"] == 5 and box["nextCursors"]["recentlyDone"] is None
    seen = [i["interaction"]["id"] for i in box["waitingForMe"]]
    cursor = box["nextCursors"]["waitingForMe"]
    while cursor:
        await ask(99)
        _, more = await me.get(f"/inbox?limit=2&section=waitingForMe&cursor={cursor}")
        assert set(more) >= {"counts", "waitingForMe", "nextCursor"}
        assert "recentlyDone" not in more
        seen.extend(i["interaction"]["id"] for i in more["waitingForMe"])
        cursor = more["nextCursor"]
    assert seen[:5] == cards and len(seen) == len(set(seen))

    status, refused = await me.get(
        f"/inbox?section=recentlyDone&cursor={box['nextCursors']['waitingForMe']}"
    )
    assert status == 400 and refused["error"]["code"] == "bad_cursor"
    status, refused = await me.get(f"/inbox?cursor={box['nextCursors']['waitingForMe']}")
    assert status == 400 and refused["error"]["code"] == "bad_cursor"


async def test_a_changed_cursor_or_an_unknown_parameter_is_refused(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    for n in range(3):
        await me.post("/tasks", {"title": f"t{n}", "targetAgentId": agent.id})
    _, page = await me.get("/tasks?limit=1")
    cursor = page["nextCursor"]
    tampered = cursor[:-3] + ("AAA" if cursor[-3:] != "AAA" else "BBB")
    for bad in (tampered, cursor[:10], "not-a-cursor", "%%%"):
        status, refused = await me.get("/tasks", query_string={"cursor": bad})
        assert status == 400 and refused["error"]["code"] == "bad_cursor", bad
        assert refused["error"]["hint"]
    # One list's cursor is not another's.
    status, refused = await me.get("/conversations", query_string={"cursor": cursor})
    assert status == 400 and refused["error"]["code"] == "bad_cursor"

    for path, parameter in (
        ("/tasks", "offset"),
        ("/tasks", "page"),
        ("/tasks", "before"),
        ("/tasks", "q"),
        ("/conversations", "offset"),
        ("/agents", "page"),
        ("/inbox", "before"),
        ("/audit", "before"),
        ("/events", "offset"),
    ):
        status, refused = await me.get(path, query_string={parameter: "1"})
        assert status == 400, (path, parameter)
        error = refused["error"]
        assert error["code"] == "unknown_parameter"
        assert (
            error["details"]["parameter"] == parameter and "limit" in error["details"]["accepted"]
        )
    # A read that takes no parameter at all refuses one as well.
    status, refused = await me.get("/members", query_string={"page": "2"})
    assert status == 400 and refused["error"]["code"] == "unknown_parameter"
    assert refused["error"]["details"]["accepted"] == []
    # Who is asking is settled first: a stranger meets the same refusal whatever they send.
    response = await me.client.get(me.url("/members"), query_string={"page": "2"})
    assert response.status_code == 401
    # The names a list takes, in the wire's camelCase, still pass.
    status, _ = await me.get("/tasks", query_string={"conversationId": "none", "limit": "5"})
    assert status == 200
