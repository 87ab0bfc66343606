"""Settings → Telegram: link a Telegram account from the page, see it, unlink it.

The hub runs its Telegram channel against a local Bot API server (``bot_api``), so the
deep link on the page is redeemed the way a phone would: ``/start <token>`` to the bot.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from quart import Quart

from hub.channels.telegram import TelegramChannel
from hub.config import load_settings
from hub.core.store.notification_models import ChannelAccount
from hub.host.app import create_app
from hub.testing import eventually
from tests.channels.peers import BotApiPeer
from tests.web.pages.world import SECRET_KEY

ADA_CHAT = 7001
_DEEP_LINK = re.compile(r'href="(https://t\.me/lineup_test_bot\?start=([A-Za-z0-9_-]+))"')


@pytest.fixture
async def app(
    database_url: str,
    tmp_path: Path,
    bot_api: BotApiPeer,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Quart]:
    """The hub, serving (its channels run), with its Telegram bot on ``bot_api`` unless the
    test asks for none. It opens the test's database itself, as a served hub does."""
    monkeypatch.setattr(TelegramChannel, "poll_timeout_s", 1)  # a quick stop
    telegram = getattr(request, "param", True)
    bot = {"telegram_bot_token": bot_api.token, "telegram_api_url": bot_api.url}
    settings = load_settings(
        database_url=database_url,
        data_dir=tmp_path,
        secret_key=SECRET_KEY,
        **(bot if telegram else {}),
    )
    app = create_app(settings)
    async with app.test_app():
        yield app


async def linked_by_bot(bot_api: BotApiPeer, token: str, name: str = "Ada") -> None:
    bot_api.send_text(ADA_CHAT, f"/start {token}", name=name)
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA_CHAT)), within=15)


@pytest.mark.parametrize("app", [False], indirect=True)
async def test_without_a_bot_the_section_says_what_the_operator_sets(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    status, html = await ada.page(ada.w("/settings"))
    assert status == 200 and 'id="telegram"' in html
    assert "Telegram is not set up on this hub." in html
    assert "LINEUP_TELEGRAM_BOT_TOKEN" in html and "Set up Telegram" in html
    assert "Link Telegram" not in html
    refused = await ada.post(ada.w("/settings/telegram/link"), {}, token_from=ada.w("/settings"))
    assert refused.status_code == 409
    assert "telegram_not_configured" in await refused.get_data(as_text=True)


async def test_link_shows_the_deep_link_and_its_qr_code_until_it_is_used(  # type: ignore[no-untyped-def]
    browser, bot_api: BotApiPeer
) -> None:
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"))
    assert "Link Telegram" in html and "data-telegram-deep-link" not in html

    pressed = await ada.post(ada.w("/settings/telegram/link"), {}, token_from=ada.w("/settings"))
    assert pressed.status_code == 302
    assert pressed.headers["Location"].endswith(f"/w/{ada.workspace_id}/settings#telegram")
    _status, html = await ada.page(ada.w("/settings"))
    found = _DEEP_LINK.search(html)
    assert found, html
    assert '<svg width="' in html and 'class="qr-code"' in html
    assert "The link works once, until" in html and "account_link.js" in html

    # Another person's page shows nothing of it.
    bob = await browser("Bob")
    _status, theirs = await bob.page(bob.w("/settings"))
    assert found.group(2) not in theirs and "data-telegram-deep-link" not in theirs

    await linked_by_bot(bot_api, found.group(2))
    _status, html = await ada.page(ada.w("/settings"))
    assert "Linked as Ada." in html and "data-telegram-deep-link" not in html


async def test_the_linked_account_is_shown_escaped_and_unlinks(  # type: ignore[no-untyped-def]
    browser, bot_api: BotApiPeer
) -> None:
    ada = await browser("Ada")
    await ada.post(ada.w("/settings/telegram/link"), {}, token_from=ada.w("/settings"))
    _status, html = await ada.page(ada.w("/settings"))
    found = _DEEP_LINK.search(html)
    assert found
    await linked_by_bot(bot_api, found.group(2), name="<b>Ada</b>")

    # Bob linked his own; Ada unlinking changes nothing of his.
    bob = await browser("Bob")
    await bob.post(bob.w("/settings/telegram/link"), {}, token_from=bob.w("/settings"))
    _status, bob_html = await bob.page(bob.w("/settings"))
    bob_link = _DEEP_LINK.search(bob_html)
    assert bob_link
    bot_api.send_text(ADA_CHAT + 1, f"/start {bob_link.group(2)}", name="Bob")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA_CHAT + 1)))

    _status, html = await ada.page(ada.w("/settings"))
    assert "Linked as &lt;b&gt;Ada&lt;/b&gt;." in html and "<b>Ada</b>" not in html
    # Bob's name as the section would show it: a bare "Bob" can be part of a random form token.
    assert "Linked as Bob" not in html.split('id="telegram"')[1].split("</section>")[0]

    # No form token, no unlinking.
    refused = await ada.post(ada.w("/settings/telegram/unlink"), {}, csrf=False)
    assert refused.status_code == 403
    assert await ChannelAccount.filter(user_id=ada.user_id).count() == 1

    unlinked = await ada.post(ada.w("/settings/telegram/unlink"), {}, token_from=ada.w("/settings"))
    assert unlinked.status_code == 302
    assert await ChannelAccount.filter(user_id=ada.user_id).count() == 0
    assert await ChannelAccount.filter(user_id=bob.user_id).count() == 1
    _status, html = await ada.page(ada.w("/settings"))
    assert "Telegram unlinked" in html and "Link Telegram" in html


async def test_linking_needs_the_form_token(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    refused = await ada.post(ada.w("/settings/telegram/link"), {}, csrf=False)
    assert refused.status_code == 403
    _status, html = await ada.page(ada.w("/settings"))
    assert "data-telegram-deep-link" not in html


async def test_the_api_unlinks_with_delete(browser, bot_api: BotApiPeer) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    api = "/api/v1/me/channels/telegram"
    headers = {"X-CSRF-Token": await ada.csrf(ada.w("/settings"))}
    nothing = await ada.client.delete(api, headers=headers)
    assert nothing.status_code == 404
    assert (await nothing.get_json())["error"]["code"] == "channel_not_linked"

    created = await ada.client.post(f"{api}/link", headers=headers)
    assert created.status_code == 201
    await linked_by_bot(bot_api, (await created.get_json())["token"])
    listed = await (await ada.client.get("/api/v1/me/channels")).get_json()
    assert [(c["surface"], c["displayName"]) for c in listed["channels"]] == [("telegram", "Ada")]

    gone = await ada.client.delete(api, headers=headers)
    assert gone.status_code == 204
    assert (await (await ada.client.get("/api/v1/me/channels")).get_json())["channels"] == []
    assert (await ada.client.delete(api, headers=headers)).status_code == 404


async def test_the_settings_address_leads_to_ones_workspace(browser, app: Quart) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.client.get("/settings")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/w/{ada.workspace_id}/settings"
    signed_out = await app.test_client().get("/settings")
    assert signed_out.status_code == 302 and "/login" in signed_out.headers["Location"]
