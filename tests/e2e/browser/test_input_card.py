"""An input card checks the format in the browser before anything is sent, says why next to
the field, and sends once the text fits."""

from __future__ import annotations

from hub.core.work.interactions import get_interaction
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world


async def test_the_format_is_checked_before_sending(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("input",))
    card_id = world.cards["input"]
    page = ada.page
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    await page.goto(ada.url("/inbox"))

    field = page.locator(f"#card-{card_id}-text")
    await field.fill("staging server")
    await field.press("Enter")
    await page.wait_for_function(
        "(id) => document.getElementById(id).getAttribute('aria-invalid') === 'true'",
        arg=f"card-{card_id}-text",
    )
    hint = page.locator(f"#card-{card_id}-format")
    assert "expected format" in await hint.inner_text()
    assert sent == []  # nothing left the browser
    assert (await get_interaction(ada.workspace_id, card_id)).status == "pending"

    await field.fill("https://staging.example.com")
    await field.press("Enter")
    await page.locator(".notice", has_text="sent to the agent").wait_for()
    decided = await get_interaction(ada.workspace_id, card_id)
    assert decided.response == {"text": "https://staging.example.com"}
    await ada.context.close()
