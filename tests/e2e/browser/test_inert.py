"""Agent text with <script>, <img onerror>, javascript: links and markdown tricks stays
inert in Chromium on every page that shows it: no dialog opens, no request leaves for
another host, nothing runs."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.e2e.browser.conftest import Person
from tests.web.pages.world import HOSTILE, build_world

OPEN_DETAILS = "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"
EMBEDS = "() => document.querySelectorAll('#main img, #main iframe, #main object').length"
ODD_LINKS = """() => [...document.querySelectorAll('a[href]')]
  .filter((a) => !/^(https?:|\\/|#)/.test(a.getAttribute('href'))).length"""


async def test_hostile_agent_text_stays_inert_everywhere(sign_up, orm, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, text=HOSTILE)
    dialogs: list[str] = []
    foreign: list[str] = []
    errors: list[str] = []
    own_host = urlsplit(hub.url).netloc

    page = ada.page
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    page.on(
        "request",
        lambda request: (
            foreign.append(request.url) if urlsplit(request.url).netloc != own_host else None
        ),
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    paths = [
        "/inbox",
        "/conversations",
        f"/conversations/{world.conversation_id}",
        "/tasks",
        f"/tasks/{world.task_id}",
        "/agents",
        f"/agents/{world.agent.id}",
        f"/interactions/{world.cards['review']}",
    ]
    for path in paths:
        await page.goto(ada.url(path))
        await page.wait_for_load_state("load")
        # Open every folded detail too: hidden text must be just as dead once shown.
        await page.evaluate(OPEN_DETAILS)
        text = await page.locator("#main").inner_text()
        assert "<script>alert('x')</script>" in text, path  # shown as sent, as text
        assert await page.evaluate(EMBEDS) == 0, path
        assert await page.evaluate(ODD_LINKS) == 0, path
    assert dialogs == []
    assert foreign == []
    assert errors == []
    await ada.context.close()
