"""Words, not ids, as a person sees them in Chromium: the task's page tells its history in
sentences with the raw events behind a closed developer toggle, and an action's fingerprint
shows its short form until the person asks for the full hash — at 1280, 800 and 390 px."""

from __future__ import annotations

import pytest

from hub.core.log.events import append_event
from hub.core.store.models import Interaction
from hub.protocol.actions import action_hash, short_hash
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world


@pytest.mark.same_on_every_database
async def test_the_story_reads_in_words_and_the_raw_parts_wait_behind_toggles(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_action",))
    for progress in (70, 80):
        await append_event(
            ada.workspace_id,
            "task.status_changed",
            {"taskId": world.task_id, "status": "running", "progress": progress},
            actor=f"agent:{world.agent.id}",
            task_id=world.task_id,
        )
    card = await Interaction.get(id=world.cards["approval_action"])
    full = action_hash(card.payload["action"]["kind"], card.payload["action"]["fields"])
    page = ada.page

    for width in (1280, 800, 390):
        await page.set_viewport_size({"width": width, "height": 900})
        await page.goto(ada.url(f"/tasks/{world.task_id}"))
        fingerprint = page.locator("details.fingerprint").first
        code = fingerprint.locator("code").first
        assert (
            f"Fingerprint {short_hash(full)}" in await fingerprint.locator("summary").inner_text()
        )
        assert not await code.is_visible()
        await fingerprint.locator("summary").click()
        assert await code.is_visible() and (await code.inner_text()).strip() == full
        await fingerprint.get_by_role("button", name="Copy").click()
        await fingerprint.get_by_role("button", name="Copied").wait_for()

        if width < 900:  # the timeline lives in the detail drawer there
            await page.locator(".drawer-toggle").click()
            await page.wait_for_function(
                "() => getComputedStyle(document.getElementById('detail')).visibility === 'visible'"
            )
        story = page.locator("[data-timeline]")
        await story.get_by_text("builder took the task on").wait_for()
        assert await story.get_by_text("builder reported 80 %").is_visible()
        assert await page.get_by_text("(2 progress reports)").is_visible()
        developer = page.locator("details[data-developer]")
        assert await developer.get_attribute("open") is None
        assert not await developer.get_by_text("task.status_changed").first.is_visible()
        # The story's lines fit the width: nothing runs off the side on a phone.
        assert await page.locator("#detail").evaluate("el => el.scrollWidth <= el.clientWidth + 1")

    # Opened, the toggle shows the log as it is, and a redraw for a new event keeps it open.
    await page.set_viewport_size({"width": 1280, "height": 900})
    await page.goto(ada.url(f"/tasks/{world.task_id}"))
    developer = page.locator("details[data-developer]")
    await developer.locator("summary").click()
    assert await developer.get_by_text("task.status_changed").first.is_visible()
    await append_event(
        ada.workspace_id,
        "task.status_changed",
        {"taskId": world.task_id, "status": "running", "progress": 95, "summary": "Last checks"},
        actor=f"agent:{world.agent.id}",
        task_id=world.task_id,
    )
    await page.get_by_text("builder reported 95 % — Last checks").wait_for()
    assert await developer.get_attribute("open") is not None
