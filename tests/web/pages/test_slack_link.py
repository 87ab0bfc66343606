"""Settings → Slack: link a Slack account from the page by a code sent to the app, see it,
unlink it.

The hub runs its Slack channel against a local Slack (``slack``) over Socket Mode, so the
code on the page is redeemed the way a person would: a direct message to the app.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from quart import Quart

from hub.channels.slack import SlackChannel
from hub.config import load_settings
from hub.core.store.notification_models import ChannelAccount
from hub.host.app import create_app
from hub.testing import eventually
from tests.channels.slack_peer import APP_TOKEN, BOT_TOKEN, SlackPeer
from tests.web.pages.world import SECRET_KEY

ADA = "U0ADA"
_CODE = re.compile(r'<code id="slack-code">([A-Za-z0-9_-]{32})</code>')


@pytest.fixture
async def app(
    database_url: str,
    tmp_path: Path,
    slack: SlackPeer,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Quart]:
    """The hub, serving, with its Slack app on ``slack`` unless the test asks for none."""
    monkeypatch.setattr(SlackChannel, "ping_interval_s", 0.5)
    with_slack = getattr(request, "param", True)
    tokens = {
        "slack_bot_token": BOT_TOKEN,
        "slack_app_token": APP_TOKEN,
        "slack_api_url": slack.api_url,
    }
    settings = load_settings(
        database_url=database_url,
        data_dir=tmp_path,
        secret_key=SECRET_KEY,
        **(tokens if with_slack else {}),
    )
    app = create_app(settings)
    async with app.test_app():
        yield app


@pytest.mark.parametrize("app", [False], indirect=True)
async def test_without_slack_the_section_says_what_the_operator_sets(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    status, html = await ada.page(ada.w("/settings"))
    assert status == 200 and 'id="slack"' in html
    assert "Slack is not set up on this hub." in html and "LINEUP_SLACK_BOT_TOKEN" in html
    assert "Link Slack" not in html
    refused = await ada.post(ada.w("/settings/slack/link"), {}, token_from=ada.w("/settings"))
    assert refused.status_code == 409
    assert "slack_not_configured" in await refused.get_data(as_text=True)


async def test_the_code_is_shown_until_it_is_used_then_unlinked(  # type: ignore[no-untyped-def]
    browser, slack: SlackPeer
) -> None:
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"))
    assert "Link Slack" in html and 'id="slack-code"' not in html
    refused = await ada.post(ada.w("/settings/slack/link"), {}, csrf=False)
    assert refused.status_code == 403

    pressed = await ada.post(ada.w("/settings/slack/link"), {}, token_from=ada.w("/settings"))
    assert pressed.status_code == 302
    assert pressed.headers["Location"].endswith(f"/w/{ada.workspace_id}/settings#slack")
    _status, html = await ada.page(ada.w("/settings"))
    code = _CODE.search(html)
    assert code, html
    assert "https://slack.com/app_redirect?app=A0LINEUP&amp;team=T0LINEUP" in html
    assert "account_link.js" in html  # says "Linked as …" without a reload
    bob = await browser("Bob")
    _status, theirs = await bob.page(bob.w("/settings"))
    assert code.group(1) not in theirs

    channel = slack.person(ADA, "<b>Ada</b>")
    await slack.send_dm(ADA, code.group(1))
    await eventually(lambda: any("Linked" in m.text for m in slack.conversation(channel)))
    _status, html = await ada.page(ada.w("/settings"))
    section = html.split('id="slack"')[1].split("</section>")[0]
    assert "Linked as &lt;b&gt;Ada&lt;/b&gt;." in section and 'id="slack-code"' not in section

    unlinked = await ada.post(ada.w("/settings/slack/unlink"), {}, token_from=ada.w("/settings"))
    assert unlinked.status_code == 302
    assert await ChannelAccount.filter(user_id=ada.user_id).count() == 0
    _status, html = await ada.page(ada.w("/settings"))
    assert "Slack unlinked" in html and "Link Slack" in html
