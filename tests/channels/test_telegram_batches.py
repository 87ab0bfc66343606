"""Several approvals of one task answered together in Telegram, against a local Bot API."""

from __future__ import annotations

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Event, Interaction, InteractionStatus
from tests.channels.answering import press, telegram_card
from tests.channels.conftest import Hub, eventually
from tests.channels.peers import BotApiPeer, SentMessage

ADA = 4242
TITLES = ("Migrate the database?", "Restart the workers?", "Purge the cache?")


async def three_approvals(hub: Hub, *, high_risk: str = TITLES[0]) -> tuple[str, list[str]]:
    """A task of the hub's agent that waits on three approvals; (task id, card ids)."""
    ws, agent = hub.owner.workspace.id, f"agent:{hub.agent.id}"
    task_id = new_id("task")
    await append_event(
        ws,
        "task.created",
        {"taskId": task_id, "title": "Ship the release", "targetAgentId": hub.agent.id},
        actor=f"user:{hub.owner.user.id}",
    )
    await append_event(ws, "task.accepted", {"taskId": task_id}, actor=agent)
    cards = []
    for title in TITLES:
        card = {"id": new_id("interaction"), "type": "approval", "title": title}
        if title == high_risk:
            card |= {"risk": "high", "impact": "Locks the orders table"}
        await append_event(
            ws, "interaction.requested", {"interaction": card}, actor=agent, task_id=task_id
        )
        cards.append(card["id"])
    return task_id, cards


async def batch_message(bot_api: BotApiPeer, count: int) -> SentMessage:
    heading = f"{count} approvals wait in “Ship the release”"
    return await telegram_card(bot_api, ADA, heading)


async def statuses(cards: list[str]) -> list[str]:
    return [(await Interaction.get(id=c)).status for c in cards]


async def test_approve_all_with_a_confirming_tap_for_high_risk(
    make_hub, bot_api: BotApiPeer
) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        _task_id, cards = await three_approvals(hub)
        batch = await batch_message(bot_api, 3)
        assert all(title in batch.text for title in TITLES) and "High risk" in batch.text
        for button in batch.buttons():
            assert len(button["callback_data"].encode()) <= 64
        # The offer for the first two was replaced by this one, which lists all three.
        first = await batch_message(bot_api, 2)
        assert "Replaced by a newer message" in first.text and first.buttons() == []

        answer = await press(bot_api, ADA, batch, "Approve all (3)")
        assert answer["text"] == "Tap again to confirm."
        assert await statuses(cards) == [InteractionStatus.PENDING] * 3

        answer = await press(bot_api, ADA, batch, "Yes, approve all (3)")
        assert answer["text"] == "Recorded 3 answers."
        decided = [await Interaction.get(id=c) for c in cards]
        assert [i.response for i in decided] == [{"optionId": "approve"}] * 3
        assert {i.responded_via for i in decided} == {"telegram"}
        assert batch.buttons() == [] and batch.text.count("by Ada via Telegram") == 3
        for title in TITLES:  # each card's own message turns read-only with the outcome
            single = await telegram_card(bot_api, ADA, title)
            await eventually(lambda single=single: "by Ada via Telegram" in single.text)
            assert single.buttons() == []

        response = await hub.client.get(
            f"/api/v1/workspaces/{hub.owner.workspace.id}/audit", headers=hub.owner.headers
        )
        trail = (await response.get_json())["entries"]
        # The trail also holds the people's sign-ins; the decisions are what this is about.
        entries = [e for e in trail if e["type"] == "interaction.resolved"]
        assert [e["interactionId"] for e in entries] == cards
        assert len({e["batchId"] for e in entries}) == 1 and entries[0]["batchId"]


async def test_a_card_decided_first_in_telegram_is_reported_by_the_batch(
    make_hub, bot_api: BotApiPeer
) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        task_id, cards = await three_approvals(hub, high_risk="")
        batch = await batch_message(bot_api, 3)
        single = await telegram_card(bot_api, ADA, TITLES[1])
        await press(bot_api, ADA, single, "Reject")
        await eventually(lambda: "Reject — by Ada via Telegram" in batch.text)
        assert batch.button("Approve all (2)")  # what is left to decide

        response = await hub.client.post(
            f"/api/v1/workspaces/{hub.owner.workspace.id}/tasks/{task_id}/decisions",
            json={
                "items": [{"interactionId": c, "response": {"optionId": "approve"}} for c in cards]
            },
            headers=hub.owner.headers,
        )
        assert response.status_code == 200, await response.get_data(as_text=True)
        outcomes = (await response.get_json())["items"]
        assert [o["outcome"] for o in outcomes] == ["decided", "already_decided", "decided"]
        assert outcomes[1]["respondedByName"] == "Ada" and outcomes[1]["via"] == "telegram"
        assert outcomes[1]["message"].startswith("Already decided by Ada via telegram")
        await eventually(lambda: batch.text.count("by Ada via the API") == 2)
        assert batch.buttons() == []
        resolved = await Event.filter(type="interaction.resolved").order_by("sequence")
        assert ["batchId" in e.payload for e in resolved] == [False, True, True]


async def test_only_the_linked_person_can_press_a_batch(make_hub, bot_api: BotApiPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        _task_id, cards = await three_approvals(hub, high_risk="")
        batch = await batch_message(bot_api, 3)
        data = batch.button("Reject all (3)")["callback_data"]
        stranger = bot_api.press(9999, batch, data)
        answer = await eventually(lambda: bot_api.answers.get(stranger))
        assert answer["text"] == "This card is for someone else."
        forged = bot_api.press(ADA, batch, "batch:nonsense:r")
        assert "no longer here" in (await eventually(lambda: bot_api.answers.get(forged)))["text"]
        assert await statuses(cards) == [InteractionStatus.PENDING] * 3

        answer = await press(bot_api, ADA, batch, "Reject all (3)")  # a "no" takes one tap
        assert answer["text"] == "Recorded 3 answers."
        assert [(await Interaction.get(id=c)).response for c in cards] == [
            {"optionId": "reject"}
        ] * 3
