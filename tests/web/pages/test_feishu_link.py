"""Settings → Feishu: link a Feishu account from the page, see it, unlink it.

The hub runs its Feishu channel against a local Feishu platform (``FeishuPeer``), so the
code on the page is redeemed the way a person would: sent to the bot in a one-to-one chat.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from quart import Quart

from hub.config import load_settings
from hub.core.store.notification_models import ChannelAccount
from hub.host.app import create_app
from hub.testing import eventually
from tests.channels.conftest import feishu_settings
from tests.channels.feishu_peer import FeishuPeer
from tests.web.pages.world import SECRET_KEY

_CODE = re.compile(r'<code id="feishu-code">([A-Za-z0-9_-]+)</code>')


@pytest.fixture
async def app(
    database_url: str, tmp_path: Path, feishu: FeishuPeer, request: pytest.FixtureRequest
) -> AsyncIterator[Quart]:
    """The hub, serving, with its Feishu app on ``feishu`` unless the test asks for none."""
    configured = getattr(request, "param", True)
    settings = load_settings(
        database_url=database_url,
        data_dir=tmp_path,
        secret_key=SECRET_KEY,
        **(feishu_settings(feishu) if configured else {}),
    )
    app = create_app(settings)
    async with app.test_app():
        if configured:  # the long connection is up: what the bot is sent reaches the hub
            await eventually(lambda: feishu.connected > 0)
        yield app


@pytest.mark.parametrize("app", [False], indirect=True)
async def test_without_an_app_the_section_says_what_the_operator_sets(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    status, html = await ada.page(ada.w("/settings"))
    assert status == 200 and 'id="feishu"' in html
    assert "Feishu is not set up on this hub." in html
    assert "LINEUP_FEISHU_APP_ID" in html and "Set up Feishu / Lark" in html
    assert "Link Feishu" not in html
    refused = await ada.post(ada.w("/settings/feishu/link"), {}, token_from=ada.w("/settings"))
    assert refused.status_code == 409
    assert "feishu_not_configured" in await refused.get_data(as_text=True)


async def test_a_code_sent_to_the_bot_links_and_unlink_undoes_it(  # type: ignore[no-untyped-def]
    browser, feishu: FeishuPeer
) -> None:
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"))
    assert "Link Feishu" in html and "feishu-code" not in html

    pressed = await ada.post(ada.w("/settings/feishu/link"), {}, token_from=ada.w("/settings"))
    assert pressed.status_code == 302
    assert pressed.headers["Location"].endswith(f"/w/{ada.workspace_id}/settings#feishu")
    _status, html = await ada.page(ada.w("/settings"))
    found = _CODE.search(html)
    assert found, html
    assert f"client/bot/open?appId={feishu.app_id}" in html

    # Another person's page shows nothing of it; a wrong code links nobody.
    bob = await browser("Bob")
    _status, theirs = await bob.page(bob.w("/settings"))
    assert found.group(1) not in theirs
    await feishu.send_text("ou_ada", "oc_ada", "x" * 32)
    assert "invalid or expired" in feishu.chat("oc_ada")[-1].text
    assert await ChannelAccount.filter(user_id=ada.user_id).count() == 0

    await feishu.send_text("ou_ada", "oc_ada", found.group(1))
    assert "Linked." in feishu.chat("oc_ada")[-1].text
    _status, html = await ada.page(ada.w("/settings"))
    assert "Linked." in html and "feishu-code" not in html
    account = await ChannelAccount.get(user_id=ada.user_id, surface="feishu")
    assert (account.external_id, account.address) == ("ou_ada", "oc_ada")

    # The code worked once.
    await feishu.send_text("ou_eve", "oc_eve", found.group(1))
    assert "invalid or expired" in feishu.chat("oc_eve")[-1].text

    unlinked = await ada.post(ada.w("/settings/feishu/unlink"), {}, token_from=ada.w("/settings"))
    assert unlinked.status_code == 302
    assert await ChannelAccount.filter(user_id=ada.user_id).count() == 0
    _status, html = await ada.page(ada.w("/settings"))
    assert "Feishu unlinked" in html and "Link Feishu" in html
