"""Several cards of one task answered together: checked together, decided one by one."""

from __future__ import annotations

import pytest

from hub.core.errors import InvalidInput, NotFound
from hub.core.log.events import events_after, last_sequence
from hub.core.people.audit import audit_trail
from hub.core.store.models import Interaction, InteractionStatus, Task, Workspace
from hub.core.work.batch_answers import BatchItem, Outcome, respond_to_batch
from hub.core.work.interactions import respond_to_interaction
from hub.core.work.tasks import create_task
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent

ME = "user:usr_me"


async def three_cards(workspace: Workspace) -> tuple[str, list[str], str]:
    """A task whose agent waits on three approvals for ME; (task id, card ids, agent id)."""
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "deploy", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    cards = [await agent_asks(agent, task.id, title=f"Step {n}") for n in (1, 2, 3)]
    return task.id, cards, agent.id


def items(cards: list[str], *options: str) -> list[BatchItem]:
    return [
        BatchItem(card, {"optionId": option}) for card, option in zip(cards, options, strict=True)
    ]


async def test_each_item_is_its_own_decision_with_the_batch_id(workspace: Workspace) -> None:
    task_id, cards, agent_id = await three_cards(workspace)
    after = await last_sequence(workspace.id)
    result = await respond_to_batch(
        workspace.id, task_id, items(cards, "approve", "approve", "reject"), responder=ME, via="api"
    )
    assert [i["outcome"] for i in result["items"]] == [Outcome.DECIDED] * 3
    assert [i["interaction"]["response"]["optionId"] for i in result["items"]] == [
        "approve",
        "approve",
        "reject",
    ]
    routed = await events_after(workspace.id, after, recipient_agent_id=agent_id)
    resolved = [e for e in routed if e.type == "interaction.resolved"]
    assert [e.payload["interactionId"] for e in resolved] == cards
    assert {e.payload["batchId"] for e in resolved} == {result["batchId"]}
    assert (await Task.get(id=task_id)).status == "running"
    trail = await audit_trail(workspace.id, after, 100)
    assert [entry["batchId"] for entry in trail] == [result["batchId"]] * 3


async def test_an_invalid_item_decides_nothing_and_says_which(workspace: Workspace) -> None:
    task_id, cards, _ = await three_cards(workspace)
    before = await last_sequence(workspace.id)
    batch = [*items(cards[:2], "approve", "maybe"), BatchItem("int_nope", {"optionId": "x"})]
    with pytest.raises(InvalidInput) as refused:
        await respond_to_batch(workspace.id, task_id, batch, responder=ME, via="api")
    assert refused.value.code == "invalid_batch"
    problems = refused.value.details["items"]
    assert [p["index"] for p in problems] == [1, 2]
    assert "must be one of" in problems[0]["problem"] and "No such card" in problems[1]["problem"]
    assert "nothing was decided" in refused.value.message
    assert await last_sequence(workspace.id) == before
    pending = await Interaction.filter(id__in=cards, status=InteractionStatus.PENDING).count()
    assert pending == 3


async def test_a_card_of_another_task_or_named_twice_is_refused(workspace: Workspace) -> None:
    task_id, cards, _ = await three_cards(workspace)
    _, other_cards, _ = await three_cards(workspace)
    batch = [*items([cards[0], cards[0]], "approve", "approve"), *items(other_cards[:1], "approve")]
    with pytest.raises(InvalidInput) as refused:
        await respond_to_batch(workspace.id, task_id, batch, responder=ME, via="api")
    problems = [p["problem"] for p in refused.value.details["items"]]
    assert problems == [
        "This card is named twice; answer it once.",
        "This card belongs to another task.",
    ]
    with pytest.raises(NotFound):
        await respond_to_batch(
            workspace.id, "task_nope", items(cards[:1], "approve"), responder=ME, via="api"
        )


async def test_a_card_decided_first_elsewhere_is_reported_and_the_rest_apply(
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    user, workspace = await make_user("ada")
    task_id, cards, _ = await three_cards(workspace)
    await respond_to_interaction(
        workspace.id, cards[1], {"optionId": "reject"}, responder=f"user:{user.id}", via="telegram"
    )
    result = await respond_to_batch(
        workspace.id,
        task_id,
        items(cards, "approve", "approve", "approve"),
        responder=ME,
        via="web",
    )
    first, second, third = result["items"]
    assert first["outcome"] == third["outcome"] == Outcome.DECIDED
    assert second["outcome"] == Outcome.ALREADY_DECIDED
    assert second["respondedByName"] == "ada" and second["via"] == "telegram"
    assert second["message"].startswith("Already decided by ada via telegram")
    assert second["interaction"]["response"] == {"optionId": "reject"}


async def test_a_repeated_request_is_the_same_batch(workspace: Workspace) -> None:
    task_id, cards, _ = await three_cards(workspace)
    batch = items(cards, "approve", "reject", "approve")
    first = await respond_to_batch(
        workspace.id, task_id, batch, responder=ME, via="api", idempotency_key="k1"
    )
    before = await last_sequence(workspace.id)
    again = await respond_to_batch(
        workspace.id, task_id, batch, responder=ME, via="api", idempotency_key="k1"
    )
    assert again["batchId"] == first["batchId"]
    assert [i["outcome"] for i in again["items"]] == [Outcome.DECIDED] * 3
    assert await last_sequence(workspace.id) == before
