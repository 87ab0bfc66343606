"""Every page renders for a signed-in person with a full workspace."""

from __future__ import annotations

from tests.web.pages.world import build_world


async def test_every_page_renders(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, text="demo")
    pages = [
        "/w/{ws}/inbox",
        "/w/{ws}/conversations",
        f"/w/{{ws}}/conversations/{world.conversation_id}",
        "/w/{ws}/tasks",
        "/w/{ws}/tasks?view=waiting_for_me",
        f"/w/{{ws}}/tasks/{world.task_id}",
        "/w/{ws}/agents",
        "/w/{ws}/agents/connect",
        f"/w/{{ws}}/agents/{world.agent.id}",
        f"/w/{{ws}}/interactions/{world.cards['choice']}",
        "/w/{ws}/settings",
    ]
    for path in pages:
        status, html = await ada.page(path.format(ws=ada.workspace_id))
        assert status == 200, (path, html[:2000])
        assert "<script>alert" not in html
