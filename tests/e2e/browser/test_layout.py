"""The layout of spec §8.1 at each breakpoint: three columns from 900 px; the detail pane
becomes a drawer below 900 px; below 640 px the sidebar folds away and the top bar keeps
the inbox count and the agents' online indicator."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from hub.core.log.events import append_event
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world

SHOWN = "(el) => { const b = el.getBoundingClientRect(); const s = getComputedStyle(el); return s.visibility !== 'hidden' && s.display !== 'none' && b.width > 0 && b.right > 0 && b.left < innerWidth; }"  # noqa: E501

OPEN = "document.getElementById('detail').classList.contains('open')"


async def shown(page: Page, selector: str) -> bool:
    return bool(await page.locator(selector).first.evaluate(SHOWN))


async def box(page: Page, selector: str) -> dict[str, float]:
    found = await page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


async def test_three_columns_drawer_and_folded_sidebar(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high",))
    page = ada.page
    task = ada.url(f"/tasks/{world.task_id}")

    await page.set_viewport_size({"width": 1280, "height": 900})
    await page.goto(task)
    assert await shown(page, "#sidebar") and await shown(page, "#main")
    assert await shown(page, "#detail")
    sidebar, main, detail = [await box(page, s) for s in ("#sidebar", "#main", "#detail")]
    assert sidebar["x"] + sidebar["width"] <= main["x"] + 1
    assert main["x"] + main["width"] <= detail["x"] + 1
    assert not await shown(page, ".drawer-toggle") and not await shown(page, ".menu-toggle")
    assert await shown(page, "#topbar-search")
    assert not await page.locator("#sidebar a", has_text="Search").is_visible()

    await page.set_viewport_size({"width": 800, "height": 900})
    await page.goto(task)
    assert await shown(page, "#sidebar") and not await shown(page, "#detail")
    toggle = page.locator(".drawer-toggle")
    await toggle.click()
    await page.wait_for_function(
        "() => document.getElementById('detail').classList.contains('open')"
    )
    await page.wait_for_function(
        "() => getComputedStyle(document.getElementById('detail')).visibility === 'visible'"
    )
    assert await toggle.get_attribute("aria-expanded") == "true"
    await page.keyboard.press("Escape")
    await page.wait_for_function(
        "() => !document.getElementById('detail').classList.contains('open')"
    )

    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(ada.url("/inbox"))
    assert not await shown(page, "#sidebar")
    inbox_pill = page.locator(".topbar-pill", has_text="waiting for you")
    agents_pill = page.locator(".topbar-pill", has_text="Agents")
    assert await inbox_pill.is_visible() and await agents_pill.is_visible()
    assert (await inbox_pill.locator(".count").inner_text()).strip() == "1"
    assert "1/1" in await agents_pill.inner_text()
    await page.locator(".menu-toggle").click()
    await page.wait_for_function(
        "() => getComputedStyle(document.getElementById('sidebar')).visibility === 'visible'"
    )
    assert await page.locator("#sidebar a", has_text="Tasks").is_visible()
    # The header has no room for the search box: the menu leads to search instead.
    assert not await shown(page, "#topbar-search")
    assert await page.locator("#sidebar a", has_text="Search").is_visible()
    # Nothing spills sideways on a phone.
    assert await page.evaluate("() => document.documentElement.scrollWidth <= innerWidth + 1")
    await ada.context.close()


@pytest.mark.same_on_every_database
async def test_an_open_drawer_stays_open_through_a_live_redraw_of_the_page(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    page = ada.page
    await page.set_viewport_size({"width": 800, "height": 900})
    await page.goto(ada.url(f"/tasks?task={world.task_id}"))
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    await page.locator(".drawer-toggle").click()
    await page.wait_for_function(OPEN)
    # The only agent goes away: the page gains a region ("no agent is online"), so the
    # whole layout is redrawn from the server.
    await append_event(
        ada.workspace_id,
        "agent.offline",
        {"agentId": world.agent.id, "name": world.agent.name, "missedHeartbeats": 2},
        actor="system",
    )
    await page.locator("[data-no-agent-online]").wait_for(state="attached")
    assert await page.evaluate(OPEN)
    assert await page.locator(".drawer-toggle").get_attribute("aria-expanded") == "true"
    await ada.context.close()
