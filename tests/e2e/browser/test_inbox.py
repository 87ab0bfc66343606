"""The inbox as a list and a detail, in Chromium at 1280, 800 and 390 px: three waiting
cards in the first screen at each width, the card beside the list on a wide screen and as
its own view on a narrow one, keyboard triage, one press for a low-risk "yes", and live
updates that never lose what the person is writing."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from hub.core.log.events import append_event
from hub.core.store.models import InteractionStatus
from hub.core.work.interactions import get_interaction, respond_to_interaction
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import World, build_world, card

pytestmark = pytest.mark.same_on_every_database

WIDTHS = ((1280, 900), (800, 900), (390, 844))
IN_FIRST_SCREEN = """(el) => { const b = el.getBoundingClientRect();
  return b.height > 0 && b.top >= 0 && b.bottom <= innerHeight; }"""
SHOWN = "(el) => { const s = getComputedStyle(el); return s.display !== 'none' && el.getBoundingClientRect().height > 0; }"  # noqa: E501


async def shown(page: Page, selector: str) -> bool:
    return bool(await page.locator(selector).first.evaluate(SHOWN))


async def ask(world: World, kind: str, text: str = "") -> str:
    asked = card(kind, text)
    await append_event(
        world.workspace_id,
        "interaction.requested",
        {"taskId": world.task_id, "interaction": asked},
        actor=f"agent:{world.agent.id}",
        task_id=world.task_id,
        conversation_id=world.conversation_id,
    )
    return str(asked["id"])


async def test_three_cards_fit_the_first_screen_and_open_beside_or_alone(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(
        ada.workspace_id, ada.user_id, kinds=("approval_high", "choice", "input")
    )
    page = ada.page
    for width, height in WIDTHS:
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(ada.url("/inbox"))
        rows = page.locator("[data-section=waiting] [data-row]")
        assert await rows.count() == 3
        for i in range(3):
            assert await rows.nth(i).evaluate(IN_FIRST_SCREEN), (width, i)
        # Each row says whose, what kind, what risk and how old, in words.
        first = await rows.nth(0).inner_text()
        assert (
            "builder" in first and "Approval" in first and "High risk" in first and "ago" in first
        )
        if width >= 1024:
            # The oldest card is open beside the list, its buttons in the first screen too.
            assert await shown(page, ".inbox-detail [data-card]")
            listed = await page.locator(".inbox-list").bounding_box()
            opened = await page.locator(".inbox-detail").bounding_box()
            assert listed and opened and listed["x"] + listed["width"] <= opened["x"] + 1
            assert await page.locator(".inbox-detail button[value=approve]").evaluate(
                IN_FIRST_SCREEN
            )
            await rows.nth(1).locator("a").click()
            await page.locator(f".inbox-detail [data-card='{world.cards['choice']}']").wait_for()
            assert await shown(page, ".inbox-list")  # the list stays
            assert "card=" in page.url
        else:
            # Narrow: the list alone; a row opens its card as a view of its own, and back.
            assert not await shown(page, ".inbox-detail")
            await rows.nth(1).locator("a").click()
            await page.locator(f".inbox-detail [data-card='{world.cards['choice']}']").wait_for()
            assert not await shown(page, ".inbox-list")
            assert await page.locator(".inbox-detail [data-card] h3").evaluate(IN_FIRST_SCREEN)
            await page.locator("[data-back]").click()
            await page.wait_for_function(
                "() => !document.querySelector('[data-inbox]').hasAttribute('data-chosen')"
            )
            assert await shown(page, ".inbox-list")
            # The browser's back button walks the same way.
            await rows.nth(2).locator("a").click()
            await page.locator(f".inbox-detail [data-card='{world.cards['input']}']").wait_for()
            await page.go_back()
            await page.wait_for_function(
                "() => !document.querySelector('[data-inbox]').hasAttribute('data-chosen')"
            )
        assert await page.evaluate("() => document.documentElement.scrollWidth <= innerWidth + 1")
    await ada.context.close()


async def test_keyboard_triage_and_one_press_for_low_risk(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(
        ada.workspace_id, ada.user_id, kinds=("approval_high", "approval_low", "choice")
    )
    page = ada.page
    await page.goto(ada.url("/inbox"))
    await page.wait_for_function("() => document.body.dataset.live === 'live'")

    # High risk has no one-press "yes" in its row; low risk has.
    high = page.locator(f"[data-row='{world.cards['approval_high']}']")
    low = page.locator(f"[data-row='{world.cards['approval_low']}']")
    assert await high.locator("[data-one-press]").count() == 0
    assert await low.locator("[data-one-press]").inner_text() == "Tidy it"

    # ? shows the shortcuts; Escape closes them.
    await page.keyboard.press("?")
    await page.locator("#shortcuts[open]").wait_for()
    await page.keyboard.press("Escape")
    await page.wait_for_function("() => !document.getElementById('shortcuts').open")

    # j, j, k: the second row, then the first; Enter opens it; 1 is its first option.
    await page.keyboard.press("j")
    await page.keyboard.press("j")
    await page.keyboard.press("k")
    focused = await page.evaluate("() => document.activeElement.closest('[data-row]').dataset.row")
    assert focused == world.cards["approval_high"]
    await page.keyboard.press("j")
    await page.keyboard.press("Enter")
    await page.locator(f".inbox-detail [data-card='{world.cards['approval_low']}']").wait_for()
    await page.keyboard.press("j")  # to the choice card, opened with Enter
    await page.keyboard.press("Enter")
    await page.locator(f".inbox-detail [data-card='{world.cards['choice']}']").wait_for()
    await page.keyboard.press("2")  # "United States"
    await page.wait_for_url("**/inbox")
    assert (await get_interaction(ada.workspace_id, world.cards["choice"])).response == {
        "optionId": "us"
    }

    # A high-risk "yes" by key still takes the second step.
    await page.locator(f"[data-row='{world.cards['approval_high']}'] a").click()
    await page.locator(f".inbox-detail [data-card='{world.cards['approval_high']}']").wait_for()
    await page.locator("body").focus()
    await page.keyboard.press("1")
    await page.locator(".confirm-step").wait_for()
    high_card = await get_interaction(ada.workspace_id, world.cards["approval_high"])
    assert high_card.status == InteractionStatus.PENDING

    # One press from the list decides the low-risk card.
    await page.goto(ada.url("/inbox"))
    await low.locator("[data-one-press]").click()
    await page.wait_for_url("**/inbox")
    decided = await get_interaction(ada.workspace_id, world.cards["approval_low"])
    assert decided.response == {"optionId": "approve"} and decided.responded_via == "web"
    assert await page.locator(f"[data-row='{world.cards['approval_low']}']").count() == 0
    await ada.context.close()


async def test_a_draft_survives_new_cards_a_reload_and_a_decision_elsewhere(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high",))
    page = ada.page
    await page.goto(ada.url("/inbox"))
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    card_id = world.cards["approval_high"]
    comment = page.locator(f"#card-{card_id}-comment")
    await page.locator(f"[data-card='{card_id}'] .comment-box summary").click()
    await comment.fill("Only after the backup has finished")
    await comment.press("End")

    # Two cards arrive while the person is writing: rows marked new, counts current,
    # the draft and the focus where they were.
    first_new = await ask(world, "choice", "first")
    await ask(world, "input", "second")
    await page.locator("[data-section=waiting] [data-row]").nth(2).wait_for()
    assert await page.locator(f"[data-row='{first_new}'] .new-mark").inner_text() == "New"
    assert await page.locator("[data-count=waitingForMe]").inner_text() == "3"
    assert await page.locator(".topbar .count").first.inner_text() == "3"
    assert await comment.input_value() == "Only after the backup has finished"
    assert await page.evaluate(f"() => document.activeElement.id === 'card-{card_id}-comment'")
    await page.keyboard.type(", please")  # the caret stayed at the end
    assert await comment.input_value() == "Only after the backup has finished, please"

    # A reload keeps the draft too.
    await page.reload()
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    assert await comment.input_value() == "Only after the backup has finished, please"

    # Decided elsewhere: the card turns read-only in place, saying who decided and where.
    await respond_to_interaction(
        ada.workspace_id,
        card_id,
        {"optionId": "reject"},
        responder=f"user:{ada.user_id}",
        via="telegram",
    )
    outcome = page.locator(f".inbox-detail [data-card='{card_id}'] [data-outcome]")
    await outcome.wait_for()
    text = await outcome.inner_text()
    assert "Ada" in text and "Do not run" in text and "telegram" in text
    assert await page.locator(f"#card-{card_id}-comment").count() == 0
    assert await page.locator(f"[data-section=waiting] [data-row='{card_id}']").count() == 0
    await ada.context.close()
