"""Long lists in a browser: a conversation opens at its newest messages and "Load earlier"
brings the older ones in above, the page held on what was being read and live updates still
arriving; the task list's "Older" reaches a task far down the list."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Locator

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.work.messages import post_message
from hub.web.pages.conversations import THREAD_PAGE
from hub.web.pages.tasks import PAGE_SIZE
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world

pytestmark = [pytest.mark.same_on_every_database, pytest.mark.timeout(120)]


def note(region: Locator, text: str) -> Locator:
    """The message of exactly this text ("Note 4", not "Note 40")."""
    return region.locator("[data-content]").filter(has_text=re.compile(f"^{text}$"))


async def test_a_thread_loads_earlier_messages_and_the_task_list_reaches_old_tasks(
    sign_up, orm
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    by = f"user:{ada.user_id}"
    for n in range(THREAD_PAGE + 5):
        await post_message(ada.workspace_id, world.conversation_id, f"Note {n}", by=by)
    page = ada.page

    await page.goto(ada.url(f"/conversations/{world.conversation_id}"))
    thread = page.locator("[data-thread]")
    await note(thread, f"Note {THREAD_PAGE + 4}").wait_for()
    assert await note(thread, "Note 4").count() == 0  # on the earlier page
    await page.wait_for_function("() => document.body.dataset.live === 'live'")

    await page.evaluate("() => window.scrollTo(0, 0)")
    first_shown = note(page.locator("[data-message]"), "Note 5").locator("xpath=..")
    before = (await first_shown.bounding_box() or {"y": 0})["y"]
    await page.locator("[data-load-earlier]").click()
    earlier = page.locator("[data-earlier]")
    await note(earlier, "Note 0").wait_for(state="attached")
    assert await page.locator("[data-load-earlier]").count() == 0  # nothing earlier left
    after = (await first_shown.bounding_box() or {"y": 0})["y"]
    assert abs(after - before) < 4  # what was being read stayed where it was

    # A message that arrives now joins the live thread; the loaded stretch stays above it.
    await post_message(ada.workspace_id, world.conversation_id, "Fresh news", by=by)
    await note(thread, "Fresh news").wait_for()
    assert await note(earlier, "Note 0").count() == 1
    assert await note(page.locator("body"), "Note 5").count() == 1

    # Without scripts' help, the link opens the earlier stretch as a page of its own.
    await page.goto(ada.url(f"/conversations/{world.conversation_id}"))
    href = await page.locator("[data-load-earlier]").get_attribute("href")
    assert href
    await page.goto(ada.url("") + href.split(f"/w/{ada.workspace_id}", 1)[1])
    await note(thread, "Note 0").wait_for()
    assert await note(thread, "Fresh news").count() == 0
    assert await page.locator("[data-latest]").is_visible()

    oldest = new_id("task")
    await append_event(
        ada.workspace_id,
        "task.created",
        {"taskId": oldest, "title": "The oldest errand", "targetAgentId": world.agent.id},
        actor=by,
    )
    for n in range(PAGE_SIZE + 1):
        await append_event(
            ada.workspace_id,
            "task.created",
            {"taskId": new_id("task"), "title": f"Errand {n}", "targetAgentId": world.agent.id},
            actor=by,
        )
    await page.goto(ada.url("/tasks"))
    await page.locator("li[data-task]").first.wait_for()
    assert await page.locator(f"li[data-task='{oldest}']").count() == 0
    await page.locator("[data-older]").click()
    await page.locator(f"li[data-task='{oldest}']").wait_for()
    assert await page.locator("[data-newest]").is_visible()
    await ada.context.close()
