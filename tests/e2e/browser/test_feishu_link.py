"""Settings → Feishu in a real browser, against a hub whose Feishu app is a local Feishu
platform: the person presses Link Feishu, sends the code to the bot in a one-to-one chat,
and the page says "Linked." by itself; then they unlink."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.notification_models import ChannelAccount
from hub.testing import HubProcess, eventually
from tests.channels.feishu_peer import FeishuPeer
from tests.e2e.browser.conftest import Person


@pytest.fixture
async def hub(database_url: str, tmp_path: Path, feishu: FeishuPeer) -> AsyncIterator[HubProcess]:
    # Started and stopped off the event loop: the hub's long connection is to the Feishu
    # this loop serves.
    process = HubProcess(database_url, tmp_path / "hub", **feishu.hub_env())
    await asyncio.to_thread(process.start)
    try:
        await eventually(lambda: feishu.connected > 0)
        yield process
    finally:
        await asyncio.to_thread(process.stop)
        print(process.log()[-4000:])  # shown by pytest only when the test fails


async def test_the_page_sees_the_code_used_and_unlinks(sign_up, feishu: FeishuPeer, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    await page.goto(f"{ada.hub.url}/settings#feishu")
    await page.wait_for_url(f"**/w/{ada.workspace_id}/settings#feishu")
    section = page.locator("#feishu")
    await section.get_by_role("button", name="Link Feishu").click()

    code = section.locator("#feishu-code")
    await code.wait_for()
    token = (await code.text_content() or "").strip()
    linked = section.locator("[data-link-linked]")
    assert await linked.is_hidden()

    await feishu.send_text("ou_ada", "oc_ada", token)
    # No reload: the page's script sees the account appear.
    await linked.get_by_text("Linked.").wait_for()
    assert await code.is_hidden()
    assert await section.get_by_role("button", name="Create a new code").is_hidden()
    assert "Linked." in feishu.chat("oc_ada")[-1].text

    await linked.get_by_role("button", name="Unlink").click()
    await page.locator(".notice", has_text="Feishu unlinked").wait_for()
    await section.get_by_role("button", name="Link Feishu").wait_for()
    assert not await ChannelAccount.filter(user_id=ada.user_id).exists()
    await ada.context.close()
