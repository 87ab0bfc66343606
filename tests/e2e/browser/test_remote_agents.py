"""In Chromium: a person adds a remote A2A agent by address on the agents page, reads its card,
gives the key the card asks for once, and gets a clear refusal for an address with no agent.

The hub runs as ``lineup serve`` with the A2A connector on; the remote agent is a real
a2a-sdk server on loopback, whose card carries markup that must stay text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import expect

from hub.testing import HubProcess, free_port
from tests.e2e.browser.conftest import Person
from tests.plugins.a2a.peers import AsksInput, Instant, serve_remote, v03_card

KEY = "sk-browser-" + "z" * 40
HOSTILE = "<img src=x onerror=alert(1)><script>alert('card')</script>"


@pytest.fixture
def hub(database_url: str, tmp_path: Path) -> Iterator[HubProcess]:
    env = {"LINEUP_A2A_ENABLED": "true", "LINEUP_OUTBOUND_ALLOW_PRIVATE": "true"}
    with HubProcess(database_url, tmp_path / "hub", **env) as process:
        try:
            yield process
        finally:
            print(process.log()[-4000:])  # shown by pytest only when the test fails


async def test_add_a_remote_agent_read_its_card_and_give_its_key(sign_up, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    dialogs: list[str] = []
    foreign: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    page.on(
        "request",
        lambda r: (
            foreign.append(r.url) if urlsplit(r.url).netloc != urlsplit(hub.url).netloc else None
        ),
    )
    port = free_port()
    card = v03_card(f"http://127.0.0.1:{port}", name="Painter", streaming=True, extra={})
    card["description"] = "Paints buttons. " + HOSTILE
    card["securitySchemes"] = {"token": {"type": "http", "scheme": "bearer"}}

    async with serve_remote(Instant(), card=card, port=port) as remote:
        await page.goto(ada.url("/agents"))
        await page.get_by_label("Agent address").fill(remote.url)
        await page.get_by_role("button", name="Fetch its card and add it").click()
        await page.wait_for_url(re.compile(r"/agents/agt_"))

        shown = page.locator("[data-remote-card]")
        await expect(shown).to_contain_text("Paints buttons. " + HOSTILE)  # as text
        await expect(shown).to_contain_text("Paint buttons")
        await expect(shown).to_contain_text("0.9")
        await expect(shown.locator("[data-streaming]")).to_have_text("yes")
        await expect(shown.locator("[data-key-state]")).to_have_attribute(
            "data-key-state", "missing"
        )

        await page.get_by_label("Key", exact=True).fill(KEY)
        await page.get_by_role("button", name="Store the key").click()
        await expect(page.locator("[data-key-state]")).to_have_attribute("data-key-state", "stored")
        await expect(page.locator(".notice", has_text="will not be shown again")).to_be_visible()
        assert KEY not in await page.content()
        assert await page.get_by_label("Replace the key").input_value() == ""

        await page.goto(ada.url("/agents"))
        await expect(page.locator("[data-live=agents]")).to_contain_text("Paints buttons.")

    # An address where nothing answers: the reason, a next step and a code; nothing added.
    nowhere = f"http://127.0.0.1:{free_port()}"
    await page.get_by_label("Agent address").fill(nowhere)
    await page.get_by_role("button", name="Fetch its card and add it").click()
    alert = page.get_by_role("alert")
    await expect(alert).to_contain_text("remote_unreachable")
    await expect(alert).to_contain_text("cannot be reached")
    await expect(page.get_by_label("Agent address")).to_have_value(nowhere)
    await expect(page.locator("[data-live=agents] > li")).to_have_count(1)

    assert dialogs == [] and foreign == []
    assert KEY not in hub.log()
    await ada.context.close()


async def test_a_remote_that_asks_for_input_is_answered_on_the_web(sign_up, hub) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    executor = AsksInput()
    async with serve_remote(executor, streaming=True) as remote:
        await page.goto(ada.url("/agents"))
        await page.get_by_label("Agent address").fill(remote.url)
        await page.get_by_role("button", name="Fetch its card and add it").click()
        await page.wait_for_url(re.compile(r"/agents/agt_"))
        agent_id = page.url.rsplit("/", 1)[1]
        created = await ada.context.request.post(
            f"{hub.url}/api/v1/workspaces/{ada.workspace_id}/tasks",
            data={"title": "Paint the button", "targetAgentId": agent_id},
        )
        assert created.status == 201, await created.text()
        task_id = (await created.json())["id"]

        await page.goto(ada.url(f"/tasks/{task_id}"))
        answer = page.locator("[id^=card-][id$=-text]")
        await expect(answer).to_be_visible()
        await expect(page.locator("#main")).to_contain_text("Which colour should the button be?")
        await answer.fill("teal")
        await page.get_by_role("button", name="Send answer").click()
        await expect(page.locator(".notice")).to_contain_text("sent to the agent")
        await page.goto(ada.url(f"/tasks/{task_id}"))  # then kept live by the page itself
        await expect(page.locator("[data-summary]")).to_have_text("Painted it teal.")
        await expect(page.locator("[data-status]").first).to_have_attribute(
            "data-status", "succeeded"
        )
    assert executor.inputs == ["Paint the button", "teal"]
    await ada.context.close()
