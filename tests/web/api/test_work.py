"""Conversations, messages, tasks, cancel, inbox, interactions and events over the JSON API."""

from __future__ import annotations

import asyncio

from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from hub.core.store.models import Agent, Workspace
from tests.core.scenario import make_agent
from tests.web.api.conftest import Person


async def agent_in(person: Person, name: str = "builder") -> Agent:
    return await make_agent(await Workspace.get(id=person.workspace_id), name)


async def test_a_conversation_with_a_tracked_message(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    status, conversation = await me.post(
        "/conversations", {"title": "Site rebuild", "agentIds": [agent.id]}
    )
    assert status == 201 and conversation["agentIds"] == [agent.id]
    status, listed = await me.get("/conversations")
    assert [c["id"] for c in listed["conversations"]] == [conversation["id"]]
    status, posted = await me.post(
        f"/conversations/{conversation['id']}/messages",
        {"content": "Tidy the dependencies", "targetAgentId": agent.id, "trackAsTask": True},
    )
    assert status == 201
    assert posted["task"]["status"] == "queued" and posted["task"]["targetAgentId"] == agent.id
    assert posted["message"]["taskId"] == posted["task"]["id"]
    assert posted["message"]["authorKind"] == "user"
    status, thread = await me.get(f"/conversations/{conversation['id']}/messages")
    assert [m["content"] for m in thread["messages"]] == ["Tidy the dependencies"]
    status, log = await me.get(f"/events?after={me.log_start + 1}")
    assert [e["type"] for e in log["events"]] == ["task.created", "message.created"]


async def test_tasks_filters_detail_and_cancel(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    status, task = await me.post(
        "/tasks", {"title": "Migrate", "description": "prod", "targetAgentId": agent.id}
    )
    assert status == 201 and task["status"] == "queued"
    await append_event(
        me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=f"agent:{agent.id}"
    )
    assert [t["id"] for t in (await me.get("/tasks?status=active"))[1]["tasks"]] == [task["id"]]
    assert (await me.get("/tasks?status=done"))[1]["tasks"] == []
    status, error = await me.get("/tasks?status=napping")
    assert status == 422 and error["error"]["code"] == "unknown_status_filter"
    status, cancelled = await me.post(f"/tasks/{task['id']}/cancel")
    assert status == 202
    assert cancelled["status"] == "running" and cancelled["cancelRequested"] is True
    status, with_reason = await me.post(
        f"/tasks/{task['id']}/cancel", {"reason": "changed my mind"}
    )
    assert status == 202 and with_reason["cancelReason"] == "changed my mind"
    status, detail = await me.get(f"/tasks/{task['id']}")
    assert status == 200
    assert [e["type"] for e in detail["timeline"]] == [
        "task.created",
        "task.accepted",
        "task.cancel_requested",
        "task.cancel_requested",
    ]
    assert detail["children"] == [] and detail["interactions"] == [] and detail["artifacts"] == []


async def test_answering_a_card_and_the_second_answer(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("ann")
    agent = await agent_in(me)
    _, task = await me.post("/tasks", {"title": "Deploy", "targetAgentId": agent.id})
    by_agent = f"agent:{agent.id}"
    await append_event(me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent)
    interaction_id = new_id("interaction")
    await append_event(
        me.workspace_id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Ship it?"}},
        actor=by_agent,
        task_id=task["id"],
    )
    status, box = await me.get("/inbox")
    assert box["counts"]["waitingForMe"] == 1
    assert box["waitingForMe"][0]["interaction"]["id"] == interaction_id
    status, card = await me.get(f"/interactions/{interaction_id}")
    assert status == 200 and card["status"] == "pending" and card["card"]["title"] == "Ship it?"
    status, invalid = await me.post(
        f"/interactions/{interaction_id}/respond", {"optionId": "maybe"}
    )
    assert status == 422 and invalid["error"]["code"] == "invalid_response"
    status, resolved = await me.post(
        f"/interactions/{interaction_id}/respond", {"optionId": "approve", "comment": "ok"}
    )
    assert status == 200 and resolved["status"] == "resolved"
    assert resolved["respondedByName"] == "ann" and resolved["via"] == "api"
    assert resolved["response"] == {"optionId": "approve", "comment": "ok"}
    status, late = await me.post(f"/interactions/{interaction_id}/respond", {"optionId": "reject"})
    assert status == 409
    error = late["error"]
    assert error["code"] == "already_decided"
    assert error["details"]["respondedBy"] == f"user:{me.user_id}"
    assert error["details"]["respondedByName"] == "ann"
    assert error["details"]["via"] == "api" and error["details"]["respondedAt"]
    assert "ann" in error["message"] and error["hint"]
    assert (await me.get(f"/tasks/{task['id']}"))[1]["status"] == "running"


async def test_concurrent_answers_from_two_clients_one_wins(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    interaction_id = new_id("interaction")
    await append_event(
        me.workspace_id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
        actor=f"agent:{agent.id}",
    )
    browser = app.test_client()
    from tests.web.api.conftest import PASSWORD

    await browser.post("/api/v1/auth/login", json={"email": me.email, "password": PASSWORD})
    url = me.url(f"/interactions/{interaction_id}/respond")
    by_token, by_cookie = await asyncio.gather(
        me.client.post(url, json={"optionId": "approve"}, headers=me.headers),
        browser.post(url, json={"optionId": "reject"}),
    )
    statuses = sorted([by_token.status_code, by_cookie.status_code])
    assert statuses == [200, 409]
    winner = by_token if by_token.status_code == 200 else by_cookie
    loser = by_cookie if winner is by_token else by_token
    decided = (await winner.get_json())["via"]
    assert decided in ("api", "web")
    assert (await loser.get_json())["error"]["details"]["via"] == decided
    # The card, the browser's sign-in and one answer.
    assert await last_sequence(me.workspace_id) == me.log_start + 3


async def test_events_after_a_sequence(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    for n in range(5):
        await append_event(me.workspace_id, "note.added", {"n": n}, actor="system")
    start = me.log_start
    status, page = await me.get(f"/events?after={start + 2}&limit=2")
    assert status == 200
    assert [e["sequence"] for e in page["events"]] == [start + 3, start + 4]
    assert page["hasMore"] is True and page["lastSequence"] == start + 5 and page["epoch"]
    status, rest = await me.get(f"/events?after={start + 4}")
    assert [e["sequence"] for e in rest["events"]] == [start + 5] and rest["hasMore"] is False
    assert rest["events"][0]["payload"] == {"n": 4}


async def test_events_beyond_the_log_in_its_epoch_start_a_new_one(sign_up) -> None:  # type: ignore[no-untyped-def]
    # A reader that stored sequence end+5 of this epoch proves the log lost events it had
    # acknowledged: the page names a new epoch, so that reader (and every other client of
    # the old epoch) starts again instead of skipping the sequences the log will reuse.
    me: Person = await sign_up()
    status, page = await me.get("/events")
    epoch, end = page["epoch"], page["lastSequence"]
    status, page = await me.get(f"/events?after={end + 5}&epoch=evt_another_log")
    assert status == 200 and page["epoch"] == epoch and page["events"] == []
    status, page = await me.get(f"/events?after={end}&epoch={epoch}")
    assert page["epoch"] == epoch
    status, page = await me.get(f"/events?after={end + 5}&epoch={epoch}")
    assert status == 200 and page["events"] == [] and page["lastSequence"] == end
    assert page["epoch"] != epoch
    assert (await Workspace.get(id=me.workspace_id)).epoch == page["epoch"]
    status, again = await me.get(f"/events?after={end + 5}&epoch={epoch}")
    assert again["epoch"] == page["epoch"]


async def test_idempotency_key_makes_a_retry_safe(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await agent_in(me)
    body = {"title": "Once", "targetAgentId": agent.id}
    key = {"Idempotency-Key": "retry-me"}
    first = await me.post("/tasks", body, headers=key)
    second = await me.post("/tasks", body, headers=key)
    assert first[1]["id"] == second[1]["id"]
    assert len((await me.get("/tasks"))[1]["tasks"]) == 1
    status, error = await me.post("/tasks", body, headers={"Idempotency-Key": "x" * 201})
    assert status == 422 and error["error"]["code"] == "invalid_idempotency_key"
