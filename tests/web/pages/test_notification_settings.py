"""The Settings page's Notifications section: surfaces and events in words, a surface this
hub did not set up shown as such (never ticked), "only high-risk cards" and quiet hours."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from quart import Quart

from hub.channels.runtime import runtime_of
from hub.config import load_settings
from hub.core.notify.preferences import get_preferences
from hub.core.people.accounts import workspaces_of
from hub.core.store.models import User
from hub.host.app import create_app
from tests.channels.peers import BotApiPeer
from tests.web.pages.conftest import PASSWORD, Browser
from tests.web.pages.world import SECRET_KEY


@asynccontextmanager
async def channels_running(app: Quart) -> AsyncIterator[None]:
    """The app's channels declare their surfaces as they start, as when the hub serves (on
    the test's database, which is already open)."""
    runtime = runtime_of(app)
    await runtime.start()
    try:
        yield
    finally:
        await runtime.stop()


def _section(html: str) -> str:
    start = html.index('id="notifications"')
    return html[start : html.index("</section>", start)]


def _surface(section: str, name: str) -> str:
    start = section.index(f'data-surface="{name}"')
    return section[start : section.index("</fieldset>", start)]


async def test_a_surface_not_set_up_is_shown_as_such_and_cannot_be_ticked(
    app: Quart, browser
) -> None:  # type: ignore[no-untyped-def]
    async with channels_running(app):
        ada = await browser("Ada")
        status, html = await ada.page(ada.w("/settings"))
        assert status == 200
        section = _section(html)
        assert "When an agent is waiting for you" in section and "When a task fails" in section
        telegram = _surface(section, "telegram")
        assert 'data-state="not_set_up"' in telegram
        assert "Not set up on this hub." in telegram and "LINEUP_TELEGRAM_BOT_TOKEN" in telegram
        boxes = re.findall(r"<input [^>]*>", telegram)
        assert len(boxes) == 2 and all("disabled" in b and "checked" not in b for b in boxes)
        email = _surface(section, "email")
        # No SMTP server here: the boxes work, but the page says mails reach no mailbox.
        assert 'data-state="kept_here"' in email and email.count("checked") == 2
        assert "Not set up to send on this hub." in email and "LINEUP_SMTP_URL" in email
        push = _surface(section, "push")  # running, but no browser of Ada's subscribed
        assert 'data-state="link_first"' in push
        assert '<a href="#push">Turn on push in a browser first</a>' in push

        refused = await ada.post(
            ada.w("/settings/notifications"),
            {"web:waiting": "on", "telegram:waiting": "on", "only_high_risk": "on"},
            token_from=ada.w("/settings"),
        )
        html = await refused.get_data(as_text=True)
        assert refused.status_code == 409
        assert "surface_not_set_up" in _section(html)
        preferences = await get_preferences(ada.user_id)
        assert preferences["onlyHighRisk"] is False  # nothing of the refused form was saved
        assert preferences["surfaces"]["web"] == {"waiting": True, "failed": True}

        await ada.post(
            ada.w("/settings/preferences"), {"language": "zh_Hans"}, token_from=ada.w("/settings")
        )
        _status, html = await ada.page(ada.w("/settings"))
        section = _section(html)
        assert "智能体在等你时" in section and "本中心尚未设置。" in section
        assert "仅限高风险卡片" in section


def _quiet_hours_away_from_now() -> tuple[str, str]:
    """A quiet window that does not hold the present moment (the person's zone is UTC), so
    what the page may notify of does not depend on when the test runs."""
    now = datetime.now(UTC)
    start, end = now + timedelta(hours=3), now + timedelta(hours=4)
    return f"{start:%H}:00", f"{end:%H}:00"


async def test_only_high_risk_and_quiet_hours_round_trip(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    start, end = _quiet_hours_away_from_now()
    response = await ada.post(
        ada.w("/settings/notifications"),
        {
            "web:waiting": "on",
            "web:failed": "on",
            "only_high_risk": "on",
            "quiet_start": start,
            "quiet_end": end,
            "quiet_high_risk": "on",
        },
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 302
    preferences = await get_preferences(ada.user_id)
    assert preferences["onlyHighRisk"] is True
    assert preferences["quietHours"] == {
        "start": start,
        "end": end,
        "letHighRiskThrough": True,
    }
    _status, html = await ada.page(ada.w("/settings"))
    section = _section(html)
    assert re.search(r'name="only_high_risk"[^>]*checked', section)
    assert re.search(r'name="quiet_high_risk"[^>]*checked', section)
    assert f'value="{start}"' in section and f'value="{end}"' in section
    assert "Times are in your time zone, UTC, where it is now" in section
    # Only high-risk cards: the browser is told it may show high-risk ones alone.
    _status, html = await ada.page(ada.w("/inbox"))
    assert 'data-notify="waiting:high failed"' in html

    response = await ada.post(
        ada.w("/settings/notifications"),
        {"web:waiting": "on", "quiet_start": "", "quiet_end": ""},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 302
    preferences = await get_preferences(ada.user_id)
    assert preferences["onlyHighRisk"] is False and preferences["quietHours"] is None
    assert preferences["surfaces"]["web"] == {"waiting": True, "failed": False}


async def test_telegram_set_up_but_not_linked_asks_to_link_it_first(
    db: str, tmp_path: Path, bot_api: BotApiPeer
) -> None:
    app = create_app(
        load_settings(
            data_dir=tmp_path,
            secret_key=SECRET_KEY,
            telegram_bot_token=bot_api.token,
            telegram_api_url=bot_api.url,
        )
    )
    async with channels_running(app):
        ada = Browser(app.test_client())
        response = await ada.post(
            "/signup",
            {"email": "ada-telegram@example.com", "password": PASSWORD, "display_name": "Ada"},
        )
        assert response.status_code == 302
        user = await User.get(email="ada-telegram@example.com")
        ada.workspace_id = (await workspaces_of(user))[0].id
        _status, html = await ada.page(ada.w("/settings"))
        telegram = _surface(_section(html), "telegram")
        assert 'data-state="link_first"' in telegram
        assert '<a href="#telegram">Link Telegram first</a>' in telegram
        boxes = re.findall(r"<input [^>]*>", telegram)
        assert boxes and all("disabled" in b and "checked" not in b for b in boxes)
