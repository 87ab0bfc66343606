"""Live over one /ws/client per tab: new events show without a reload, and after the
connection drops (here: the hub restarts) the tab reconnects and the log replays what it
missed, by sequence."""

from __future__ import annotations

from hub.core.log.events import append_event
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world, card

SLEEP_AND_WAKE = """() => {
  const state = (value) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => value });
    document.dispatchEvent(new Event('visibilitychange'));
  };
  state('hidden');
  const realNow = Date.now;
  Date.now = () => realNow() + 60 * 1000;  // a minute passes while hidden
  state('visible');
}"""


async def test_updates_arrive_live_and_missed_ones_replay(sign_up, orm, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    page = ada.page
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    await page.goto(ada.url(f"/conversations/{world.conversation_id}"))
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    await page.evaluate("() => { window.sameDocument = true; }")

    # A message sent from elsewhere (the API) shows up in this tab.
    response = await ada.context.request.post(
        f"{hub.url}/api/v1/workspaces/{ada.workspace_id}/conversations/{world.conversation_id}/messages",
        data={"content": "Sent from my phone", "targetAgentId": world.agent.id},
    )
    assert response.status == 201, await response.text()
    await page.locator("[data-thread]", has_text="Sent from my phone").wait_for()

    # The hub goes away; meanwhile the agent asks for a decision (written straight to the
    # log, as another hub process would). The tab must catch up when the hub is back.
    hub.stop()
    await page.wait_for_function("() => document.body.dataset.live === 'offline'")
    asked = card("approval_high", "while you were away")
    await append_event(
        ada.workspace_id,
        "interaction.requested",
        {"taskId": world.task_id, "interaction": asked},
        actor=f"agent:{world.agent.id}",
        task_id=world.task_id,
        conversation_id=world.conversation_id,
    )
    hub.start()
    await page.locator(f"[data-card='{asked['id']}']").wait_for()
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    announced = await page.locator("[data-announcer]").text_content()
    assert announced is not None and "waiting for you" in announced
    assert await page.evaluate("() => window.sameDocument === true")  # never reloaded
    assert await page.locator(".topbar .count").first.inner_text() == "1"
    # One socket at a time: the second was opened only after the first was gone.
    assert len(sockets) >= 2 and all("/ws/client?workspace=" in url for url in sockets)
    assert "after=0" not in sockets[-1]  # it resumed from the last sequence it had

    # A tab that slept a while reconnects on waking (its old socket may have died
    # silently) and resumes from its last sequence.
    before = len(sockets)
    await page.evaluate(SLEEP_AND_WAKE)
    await page.wait_for_function("() => document.body.dataset.live === 'live'")
    assert len(sockets) == before + 1
    resumed_after = int(sockets[-1].split("after=")[1].split("&")[0])
    assert resumed_after == await page.evaluate("() => window.LineUp.live.lastSequence")
    response = await ada.context.request.post(
        f"{hub.url}/api/v1/workspaces/{ada.workspace_id}/conversations/{world.conversation_id}/messages",
        data={"content": "Back from lunch", "targetAgentId": world.agent.id},
    )
    assert response.status == 201
    await page.locator("[data-thread]", has_text="Back from lunch").wait_for()
    await ada.context.close()
