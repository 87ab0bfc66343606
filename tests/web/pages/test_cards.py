"""Answering cards from the web: every type, the high-risk second step, read-only after."""

from __future__ import annotations

from hub.core.store.models import InteractionStatus
from hub.core.work.interactions import get_interaction, respond_to_interaction
from tests.web.pages.world import build_world


async def _world(browser, *kinds: str):  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=kinds)
    return ada, world


async def test_the_card_reads_why_impact_options_then_details(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "approval_high", "choice")
    _status, html = await ada.page(ada.w("/inbox"))
    # Both waiting as rows; the oldest open beside them.
    assert html.count("data-row=") == 2 and html.count("data-card=") == 1
    why, impact = html.index("Why you are needed"), html.index("Impact</p>")
    actions, details = html.index("What you can do"), html.index("<summary>Details")
    assert why < impact < actions < details
    assert "High risk" in html and "⚠" in html  # risk in words and an icon
    _status, html = await ada.page(ada.w(f"/inbox?card={world.cards['choice']}"))
    assert "★ Recommended" in html and f'data-card="{world.cards["choice"]}"' in html


async def test_a_high_risk_yes_needs_a_second_deliberate_step(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "approval_high")
    card_id = world.cards["approval_high"]
    respond = ada.w(f"/interactions/{card_id}/respond")

    response = await ada.post(respond, {"optionId": "approve"}, token_from=ada.w("/inbox"))
    html = await response.get_data(as_text=True)
    assert response.status_code == 200 and "Confirm: Run it" in html
    assert (await get_interaction(ada.workspace_id, card_id)).status == InteractionStatus.PENDING

    # A confirmation for another option does not count.
    response = await ada.post(
        respond, {"optionId": "approve", "confirm": "reject"}, token_from=ada.w("/inbox")
    )
    assert (await get_interaction(ada.workspace_id, card_id)).status == InteractionStatus.PENDING

    response = await ada.post(
        respond,
        {"optionId": "approve", "confirm": "approve", "comment": "go"},
        token_from=ada.w("/inbox"),
    )
    assert response.status_code == 302
    decided = await get_interaction(ada.workspace_id, card_id)
    assert decided.response == {"optionId": "approve", "comment": "go"}
    assert decided.responded_via == "web" and decided.responded_by == f"user:{ada.user_id}"


async def test_saying_no_to_a_high_risk_card_takes_one_step(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "approval_high")
    card_id = world.cards["approval_high"]
    response = await ada.post(
        ada.w(f"/interactions/{card_id}/respond"),
        {"optionId": "reject"},
        token_from=ada.w("/inbox"),
    )
    assert response.status_code == 302
    assert (await get_interaction(ada.workspace_id, card_id)).response == {"optionId": "reject"}


async def test_input_is_checked_in_the_browser_and_by_the_server(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "input")
    card_id = world.cards["input"]
    _status, html = await ada.page(ada.w("/inbox"))
    assert 'type="url"' in html  # the browser checks the format before sending

    respond = ada.w(f"/interactions/{card_id}/respond")
    response = await ada.post(respond, {"text": "not a url"}, token_from=ada.w("/inbox"))
    html = await response.get_data(as_text=True)
    assert response.status_code == 422
    assert "must be a URL" in html and 'value="not a url"' in html and 'aria-invalid="true"' in html
    assert (await get_interaction(ada.workspace_id, card_id)).status == InteractionStatus.PENDING

    response = await ada.post(
        respond, {"text": "https://staging.example.com"}, token_from=ada.w("/inbox")
    )
    assert response.status_code == 302
    assert (await get_interaction(ada.workspace_id, card_id)).response == {
        "text": "https://staging.example.com"
    }


async def test_single_and_multiple_choice(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "choice", "multi")
    _status, html = await ada.page(ada.w(f"/inbox?card={world.cards['multi']}"))
    assert 'type="checkbox" name="optionIds"' in html
    response = await ada.post(
        ada.w(f"/interactions/{world.cards['choice']}/respond"),
        {"optionId": "us"},
        token_from=ada.w("/inbox"),
    )
    assert response.status_code == 302
    response = await ada.client.post(
        ada.w(f"/interactions/{world.cards['multi']}/respond"),
        form=[
            ("optionIds", "types"),
            ("optionIds", "lint"),
            ("csrf_token", await ada.csrf(ada.w("/inbox"))),
        ],
    )
    assert response.status_code == 302
    multi = await get_interaction(ada.workspace_id, world.cards["multi"])
    assert multi.response == {"optionIds": ["lint", "types"]}


async def test_an_answered_card_is_read_only_with_who_what_when_and_via(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "review")
    card_id = world.cards["review"]
    await respond_to_interaction(
        ada.workspace_id,
        card_id,
        {"optionId": "request_changes", "comment": "split step 2"},
        responder=f"user:{ada.user_id}",
        via="telegram",
    )
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert "Decided by Ada" in html and "Request changes" in html
    assert "via telegram" in html and "split step 2" in html and "<time" in html
    assert f'action="/w/{ada.workspace_id}/interactions/{card_id}/respond"' not in html

    # A late answer from the web is told who decided first.
    response = await ada.post(
        ada.w(f"/interactions/{card_id}/respond"),
        {"optionId": "approve"},
        token_from=ada.w("/inbox"),
    )
    assert response.status_code == 302
    _status, html = await ada.page(ada.w("/inbox"))
    assert "Already decided by Ada via telegram" in html


async def test_a_live_redraw_leaves_the_notice_for_the_page(browser) -> None:  # type: ignore[no-untyped-def]
    ada, world = await _world(browser, "choice")
    response = await ada.post(
        ada.w(f"/interactions/{world.cards['choice']}/respond"),
        {"optionId": "eu"},
        token_from=ada.w("/inbox"),
    )
    assert response.status_code == 302
    _status, html = await ada.page(ada.w("/inbox"), headers={"X-Live-Refresh": "1"})
    assert "sent to the agent" not in html
    _status, html = await ada.page(ada.w("/inbox"))
    assert "Your answer was sent to the agent." in html
