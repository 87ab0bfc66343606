"""Settings → Telegram in a real browser, against a hub whose bot is a local Bot API server:
the person presses Link, their phone sends ``/start <token>`` to the bot, and the page says
"Linked as …" by itself; then they unlink."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from hub.core.store.notification_models import ChannelAccount
from hub.testing import HubProcess
from tests.channels.peers import BotApiPeer
from tests.e2e.browser.conftest import Person

ADA_CHAT = 8080


@pytest.fixture
async def hub(database_url: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[HubProcess]:
    # Started and stopped off the event loop: the hub calls the Bot API server this loop
    # serves while it starts and stops.
    process = HubProcess(
        database_url,
        tmp_path / "hub",
        LINEUP_TELEGRAM_BOT_TOKEN=bot_api.token,
        LINEUP_TELEGRAM_API_URL=bot_api.url,
    )
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)
        print(process.log()[-4000:])  # shown by pytest only when the test fails


async def test_the_page_sees_the_link_complete_and_unlinks(
    sign_up, bot_api: BotApiPeer, orm
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    # The address the bot gives leads to the workspace's Settings, at the Telegram section.
    await page.goto(f"{ada.hub.url}/settings#telegram")
    await page.wait_for_url(f"**/w/{ada.workspace_id}/settings#telegram")
    section = page.locator("#telegram")
    await section.get_by_role("button", name="Link Telegram").click()

    deep_link = section.locator("[data-telegram-deep-link]")
    await deep_link.wait_for()
    await section.locator("svg.qr-code").wait_for()
    url = await deep_link.get_attribute("href")
    assert url is not None and url.startswith("https://t.me/lineup_test_bot?start=")
    [token] = parse_qs(urlsplit(url).query)["start"]
    linked = section.locator("[data-link-linked]")
    assert await linked.is_hidden()

    bot_api.send_text(ADA_CHAT, f"/start {token}", name="Ada Lovelace")
    # No reload: the page's script sees the account appear.
    await linked.get_by_text("Linked as Ada Lovelace.").wait_for()
    assert await deep_link.is_hidden()
    assert any("Linked" in m.text for m in bot_api.chat(ADA_CHAT))

    await linked.get_by_role("button", name="Unlink").click()
    await page.locator(".notice", has_text="Telegram unlinked").wait_for()
    await section.get_by_role("button", name="Link Telegram").wait_for()
    assert not await ChannelAccount.filter(user_id=ada.user_id).exists()
    await ada.context.close()
