"""A task's pending approvals answered together from its page: all, or item by item."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from hub.core.log.events import append_event
from hub.core.store.models import Event, InteractionStatus
from hub.core.work.interactions import get_interaction, respond_to_interaction
from tests.web.pages.conftest import Browser
from tests.web.pages.world import build_world, card


async def three_approvals(ada: Browser) -> tuple[str, list[str]]:
    """A task waiting on a high-risk approval and two ordinary ones."""
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high",))
    cards = [world.cards["approval_high"]]
    for title in ("Tag the release?", "Post the notes?"):
        asked = {**card("approval_high", ""), "title": title, "risk": "low"}
        await append_event(
            ada.workspace_id,
            "interaction.requested",
            {"interaction": asked},
            actor=f"agent:{world.agent.id}",
            task_id=world.task_id,
        )
        cards.append(asked["id"])
    return world.task_id, cards


async def send(ada: Browser, task_id: str, fields: list[tuple[str, str]]) -> Any:
    """The batch form as the page posts it (repeated ``items`` fields included)."""
    page = ada.w(f"/tasks/{task_id}")
    token = await ada.csrf(page)
    return await ada.client.post(
        ada.w(f"/tasks/{task_id}/decisions"),
        data=urlencode([("csrf_token", token), *fields]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


async def statuses(ada: Browser, cards: list[str]) -> list[Any]:
    return [(await get_interaction(ada.workspace_id, c)).response for c in cards]


async def test_the_task_page_offers_to_decide_its_approvals_together(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    task_id, _cards = await three_approvals(ada)
    _status, html = await ada.page(ada.w(f"/tasks/{task_id}"))
    assert "Decide 3 together" in html
    assert "Approve all (3)" in html and "Reject all (3)" in html
    assert html.count("data-batch-item=") == 3


async def test_approve_all_asks_to_confirm_the_high_risk_item_first(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    task_id, cards = await three_approvals(ada)
    shown = [("items", c) for c in cards]

    response = await send(ada, task_id, [*shown, ("all", "approve")])
    html = await response.get_data(as_text=True)
    assert response.status_code == 200 and "Confirm the high-risk items" in html
    assert f'name="confirm-{cards[0]}"' in html and f'name="confirm-{cards[1]}"' not in html
    assert await statuses(ada, cards) == [None, None, None]  # nothing sent yet

    choices = [(f"choice-{c}", "approve") for c in cards]
    response = await send(ada, task_id, [*shown, *choices, (f"confirm-{cards[0]}", "approve")])
    assert response.status_code == 302
    assert await statuses(ada, cards) == [{"optionId": "approve"}] * 3
    resolved = await Event.filter(workspace_id=ada.workspace_id, type="interaction.resolved")
    assert len({e.payload["batchId"] for e in resolved}) == 1
    assert {e.payload["via"] for e in resolved} == {"web"}


async def test_item_by_item_and_a_card_decided_elsewhere_is_reported(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    task_id, cards = await three_approvals(ada)
    await respond_to_interaction(
        ada.workspace_id,
        cards[2],
        {"optionId": "reject"},
        responder=f"user:{ada.user_id}",
        via="telegram",
    )
    fields = [("items", c) for c in cards] + [
        (f"choice-{cards[0]}", "reject"),  # a "no" to a high-risk card takes one step
        (f"choice-{cards[1]}", "approve"),
        (f"choice-{cards[2]}", "approve"),
        ("all", ""),
    ]
    response = await send(ada, task_id, fields)
    assert response.status_code == 302
    assert await statuses(ada, cards) == [
        {"optionId": "reject"},
        {"optionId": "approve"},
        {"optionId": "reject"},
    ]
    _status, html = await ada.page(ada.w(f"/tasks/{task_id}"))
    assert "2 answers were sent to the agent." in html
    assert "“Post the notes?”: already decided by Ada via telegram." in html


async def test_nothing_chosen_or_a_foreign_card_decides_nothing(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    task_id, cards = await three_approvals(ada)
    response = await send(ada, task_id, [("items", c) for c in cards] + [("all", "")])
    assert response.status_code == 302
    _status, html = await ada.page(ada.w(f"/tasks/{task_id}"))
    assert "Choose approve or reject for at least one item." in html

    fields = [("items", cards[1]), ("items", "int_elsewhere"), ("all", "approve")]
    await send(ada, task_id, fields)
    _status, html = await ada.page(ada.w(f"/tasks/{task_id}"))
    assert "nothing was decided" in html and "invalid_batch" in html
    pending = [(await get_interaction(ada.workspace_id, c)).status for c in cards]
    assert pending == [InteractionStatus.PENDING] * 3
