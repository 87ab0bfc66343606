"""Every interactive element of every page is reachable with Tab and has a name."""

from __future__ import annotations

from playwright.async_api import Page

from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world

# Marks each visible interactive element and returns what is wrong with its name.
MARK = """() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, '
    + '[tabindex]:not([tabindex="-1"])';
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    // checkVisibility: the content of a closed <details> keeps a box but is not shown.
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && !el.disabled
      && el.checkVisibility();
  };
  const nameOf = (el) => {
    const labelledBy = el.getAttribute('aria-labelledby');
    if (labelledBy) {
      return labelledBy.split(' ')
        .map((id) => document.getElementById(id)?.textContent || '').join(' ').trim();
    }
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label').trim();
    if (el.labels && el.labels.length) {
      return [...el.labels].map((l) => l.textContent).join(' ').trim();
    }
    if (['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName)) return (el.title || '').trim();
    return (el.textContent || '').trim();
  };
  const found = [...document.querySelectorAll(selector)].filter(visible);
  found.forEach((el, i) => el.setAttribute('data-kb', String(i)));
  return {
    count: found.length,
    unnamed: found.filter((el) => !nameOf(el)).map((el) => el.outerHTML.slice(0, 120)),
  };
}"""


async def tab_through(page: Page, count: int) -> set[str]:
    await page.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
    await page.focus("body")
    reached: set[str] = set()
    for _ in range(count + 15):
        await page.keyboard.press("Tab")
        marker = await page.evaluate("() => document.activeElement?.getAttribute('data-kb')")
        if marker is not None:
            reached.add(marker)
        if len(reached) == count:
            break
    return reached


async def check(page: Page, url: str | None) -> int:
    """Check the page at ``url`` (None: the page as it is now)."""
    if url is not None:
        await page.goto(url)
    url = url or page.url
    # Hold live redraws while counting: a redrawn region would lose the markers.
    await page.evaluate("() => document.body.setAttribute('data-no-refresh', '')")
    marks = await page.evaluate(MARK)
    assert marks["unnamed"] == [], url
    reached = await tab_through(page, marks["count"])
    missing = set(map(str, range(marks["count"]))) - reached
    if missing:
        shown = await page.evaluate(
            "(ids) => ids.map((i) => document.querySelector(`[data-kb='${i}']`).outerHTML)",
            sorted(missing),
        )
        raise AssertionError(f"not reachable by Tab on {url}: {shown}")
    return int(marks["count"])


async def test_every_page_is_keyboard_reachable_and_labelled(sign_up, orm, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, text="demo")
    logged_out = await ada.context.browser.new_page()  # type: ignore[union-attr]
    total = 0
    for path in ("/login", "/signup"):
        total += await check(logged_out, hub.url + path)
    await logged_out.close()
    for path in (
        "/inbox",
        "/conversations",
        f"/conversations/{world.conversation_id}",
        "/tasks",
        f"/tasks/{world.task_id}",
        "/agents",
        "/agents/connect",
        f"/agents/{world.agent.id}",
        f"/interactions/{world.cards['multi']}",
        "/settings",
    ):
        total += await check(ada.page, ada.url(path))
    # The high-risk second step, reached by choosing "Run it" on the inbox.
    await ada.page.goto(ada.url("/inbox"))
    await ada.page.locator("button[name=optionId][value=approve]").first.click()
    await ada.page.locator(".confirm-step").wait_for()
    total += await check(ada.page, None)
    assert total > 100
    await ada.context.close()
