"""``POST /tasks/{id}/decisions``: several cards of one task answered in one request."""

from __future__ import annotations

from typing import Any

from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from tests.web.api.conftest import Person
from tests.web.api.test_work import agent_in


async def waiting_task(me: Person, count: int = 2) -> tuple[str, list[str]]:
    agent = await agent_in(me)
    _, task = await me.post("/tasks", {"title": "Deploy", "targetAgentId": agent.id})
    by_agent = f"agent:{agent.id}"
    await append_event(me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent)
    cards = []
    for n in range(count):
        card = {"id": new_id("interaction"), "type": "approval", "title": f"Step {n}?"}
        await append_event(
            me.workspace_id,
            "interaction.requested",
            {"interaction": card},
            actor=by_agent,
            task_id=task["id"],
        )
        cards.append(card["id"])
    return task["id"], cards


def body(cards: list[str], *options: str) -> dict[str, Any]:
    pairs = zip(cards, options, strict=True)
    return {"items": [{"interactionId": c, "response": {"optionId": o}} for c, o in pairs]}


async def test_a_batch_answers_each_card_and_names_the_batch(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("ann")
    task_id, cards = await waiting_task(me)
    status, result = await me.post(
        f"/tasks/{task_id}/decisions",
        body(cards, "approve", "reject"),
        headers={"Idempotency-Key": "batch-1"},
    )
    assert status == 200, result
    assert result["taskId"] == task_id and result["batchId"].startswith("bat_")
    assert [i["outcome"] for i in result["items"]] == ["decided", "decided"]
    assert [i["interaction"]["via"] for i in result["items"]] == ["api", "api"]
    before = await last_sequence(me.workspace_id)
    _, again = await me.post(
        f"/tasks/{task_id}/decisions",
        body(cards, "approve", "reject"),
        headers={"Idempotency-Key": "batch-1"},
    )
    assert again["batchId"] == result["batchId"]
    assert await last_sequence(me.workspace_id) == before  # a retry decides nothing twice
    _, audit = await me.get("/audit")
    decided = [e for e in audit["entries"] if e["type"] == "interaction.resolved"]
    assert [e["batchId"] for e in decided] == [result["batchId"]] * 2


async def test_a_bad_item_is_a_clear_error_and_decides_nothing(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("ann")
    task_id, cards = await waiting_task(me)
    before = await last_sequence(me.workspace_id)
    status, refused = await me.post(
        f"/tasks/{task_id}/decisions", body(cards, "approve", "perhaps")
    )
    assert status == 422
    error = refused["error"]
    assert error["code"] == "invalid_batch" and error["hint"]
    assert error["details"]["items"] == [
        {
            "index": 1,
            "interactionId": cards[1],
            "problem": "'optionId' must be one of: approve, reject.",
        }
    ]
    status, refused = await me.post(f"/tasks/{task_id}/decisions", {"items": []})
    assert status == 422 and refused["error"]["code"] == "invalid_input"
    status, refused = await me.post("/tasks/task_nope/decisions", body(cards, "approve", "approve"))
    assert status == 404 and refused["error"]["code"] == "task_not_found"
    assert await last_sequence(me.workspace_id) == before


async def test_the_endpoint_is_in_the_openapi_document(app: Quart) -> None:
    response = await app.test_client().get("/api/openapi.json")
    paths = (await response.get_json())["paths"]
    assert "post" in paths["/api/v1/workspaces/{ws}/tasks/{task_id}/decisions"]
