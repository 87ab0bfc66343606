"""Settings → Slack in a real browser, against a hub whose Slack app is a local Slack: the
person presses Link Slack, sends the code to the app in Slack, and the page says "Linked as
…" by itself; then they unlink."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.notification_models import ChannelAccount
from hub.testing import HubProcess
from tests.channels.slack_peer import APP_TOKEN, BOT_TOKEN, SlackPeer
from tests.e2e.browser.conftest import Person

ADA = "U0ADA"


@pytest.fixture
async def hub(database_url: str, tmp_path: Path, slack: SlackPeer) -> AsyncIterator[HubProcess]:
    # Started and stopped off the event loop: the hub asks the Slack this loop serves.
    process = HubProcess(
        database_url,
        tmp_path / "hub",
        LINEUP_SLACK_BOT_TOKEN=BOT_TOKEN,
        LINEUP_SLACK_APP_TOKEN=APP_TOKEN,
        LINEUP_SLACK_API_URL=slack.api_url,
    )
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)
        print(process.log()[-4000:])  # shown by pytest only when the test fails


async def test_the_page_sees_the_code_used_and_unlinks(sign_up, slack: SlackPeer, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    await page.goto(f"{ada.hub.url}/settings#slack")
    await page.wait_for_url(f"**/w/{ada.workspace_id}/settings#slack")
    section = page.locator("#slack")
    await section.get_by_role("button", name="Link Slack").click()

    code = section.locator("#slack-code")
    await code.wait_for()
    token = (await code.text_content() or "").strip()
    assert len(token) == 32
    linked = section.locator("[data-link-linked]")
    assert await linked.is_hidden()

    channel = slack.person(ADA, "Ada Lovelace")
    await slack.send_dm(ADA, token)
    # No reload: the page's script sees the account appear.
    await linked.get_by_text("Linked as Ada Lovelace.").wait_for()
    assert await code.is_hidden()
    assert any("Linked" in m.text for m in slack.conversation(channel))

    await linked.get_by_role("button", name="Unlink").click()
    await page.locator(".notice", has_text="Slack unlinked").wait_for()
    await section.get_by_role("button", name="Link Slack").wait_for()
    assert not await ChannelAccount.filter(user_id=ada.user_id).exists()
    await ada.context.close()
