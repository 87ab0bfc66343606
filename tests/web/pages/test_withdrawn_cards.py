"""A card its agent withdrew, on the web: gone from the inbox, closed on its page, saying why."""

from __future__ import annotations

from typing import Any

from hub.core.log.events import append_event
from hub.core.store.models import Interaction, InteractionStatus
from tests.web.pages.world import build_world


async def _withdrawn(browser, reason: str, note: str = ""):  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high", "choice"))
    card_id = world.cards["approval_high"]
    payload: dict[str, Any] = {"interactionId": card_id, "reason": reason, "note": note}
    await append_event(
        ada.workspace_id, "interaction.withdrawn", payload, actor=f"agent:{world.agent.id}"
    )
    return ada, world, card_id


async def test_answered_in_the_terminal_reads_so_and_leaves_the_inbox(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world, card_id = await _withdrawn(browser, "answered_in_terminal", "<b>allowed</b>")
    _status, inbox = await ada.page(ada.w("/inbox"))
    assert f'data-card="{card_id}"' not in inbox
    assert f'data-card="{world.cards["choice"]}"' in inbox  # the other card still waits

    status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert status == 200
    assert "Answered in the terminal; this card takes no answer." in html
    assert 'data-withdrawn="answered_in_terminal"' in html
    assert "&lt;b&gt;allowed&lt;/b&gt;" in html and "<b>allowed</b>" not in html  # plain text
    assert 'data-card-status="cancelled"' in html and "data-card-form" not in html
    # Its header says why it closed, not "Cancelled" (the status it is stored with).
    assert 'data-status="answered_in_terminal"' in html
    assert 'data-status="cancelled"' not in html and "Cancelled" not in html

    # Chinese, from the same catalogue the other surfaces use.
    _status, zh = await ada.page(
        ada.w(f"/interactions/{card_id}"), headers={"Accept-Language": "zh-CN"}
    )
    assert "已在终端中回答" in zh


async def test_an_agent_that_no_longer_needs_it_says_so_with_its_note(browser) -> None:  # type: ignore[no-untyped-def]
    ada, _world, card_id = await _withdrawn(browser, "no_longer_needed", "Found another way")
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert "The agent withdrew this card; it takes no answer." in html
    assert "Found another way" in html
    assert 'data-status="withdrawn"' in html and "Cancelled" not in html


async def test_an_answer_from_an_open_page_is_refused_and_changes_nothing(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    card_id = world.cards["choice"]
    respond = ada.w(f"/interactions/{card_id}/respond")
    token = await ada.csrf(ada.w(f"/interactions/{card_id}"))  # the page, still open
    await append_event(
        ada.workspace_id,
        "interaction.withdrawn",
        {"interactionId": card_id, "reason": "answered_in_terminal"},
        actor=f"agent:{world.agent.id}",
    )
    response = await ada.post(respond, {"optionId": "a", "csrf_token": token}, csrf=False)
    assert response.status_code == 302  # back, told it takes no answer, and why
    _status, html = await ada.page(response.headers["Location"])
    assert "Answered in the terminal; this card takes no answer." in html
    assert f"Interaction {card_id}" not in html  # the card, not its id
    card = await Interaction.get(id=card_id)
    assert card.status == InteractionStatus.CANCELLED and card.response is None
