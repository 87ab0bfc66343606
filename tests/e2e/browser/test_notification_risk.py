"""Browser notifications follow "only for high-risk cards": in a tab in the background, a
card without a risk (medium) arrives silently in the inbox, a high-risk one is shown."""

from __future__ import annotations

from hub.core.log.events import append_event
from tests.e2e.browser.conftest import Person
from tests.e2e.browser.test_demo_agent import NOTIFICATIONS
from tests.web.pages.world import build_world, card


async def test_only_high_risk_cards_become_browser_notifications(sign_up, orm, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    await ada.context.add_init_script(NOTIFICATIONS)
    changed = await ada.context.request.put(
        f"{hub.url}/api/v1/me/notification-preferences", data={"onlyHighRisk": True}
    )
    assert changed.status == 200, await changed.text()
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    page = ada.page
    await page.goto(ada.url("/inbox"))
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    assert await page.evaluate("() => document.body.dataset.notify") == "waiting:high failed"

    quiet, loud = card("choice", "no risk stated"), card("approval_high", "high risk")
    for asked in (quiet, loud):
        await append_event(
            ada.workspace_id,
            "interaction.requested",
            {"taskId": world.task_id, "interaction": asked},
            actor=f"agent:{world.agent.id}",
            task_id=world.task_id,
        )
    await page.locator(f"[data-row='{loud['id']}']").wait_for()
    await page.locator(f"[data-row='{quiet['id']}']").wait_for()  # in the inbox all the same
    await page.wait_for_function("() => window.shown.length > 0")
    shown = await page.evaluate("() => window.shown.map((n) => n.body)")
    assert shown == [loud["title"]]
