"""Settings → Telegram: link this person's Telegram account, see it, unlink it.

"Link Telegram" asks the channel runtime for a one-time deep link (``link_account``, the
same as ``POST /api/v1/me/channels/telegram/link``) and shows it as a link and a QR code to
scan with a phone. The pending link is kept in this browser's session, next to the sign-in
it belongs to, so the page shows it again after a reload until it is used or expires: with
JavaScript off, reloading is how one sees that the link went through. With JavaScript on,
``static/telegram_link.js`` asks ``GET /api/v1/me/channels`` until it does.

Names come from Telegram (the sender's own choice): the template escapes them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import segno
from markupsafe import Markup
from quart import Blueprint, current_app, flash, redirect, session, url_for

from hub.channels.runtime import runtime_of
from hub.core.errors import NotFound
from hub.core.notify.channel_accounts import unlink
from hub.core.store.notification_models import ChannelAccount
from hub.protocol.clock import utcnow
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for, home_workspace

SURFACE = "telegram"
SESSION_LINK = "telegram_link"  # session[SESSION_LINK]: the pending deep link, see above

blueprint = Blueprint("telegram_link", __name__)


def qr_svg(url: str) -> Markup:
    """The deep link as an inline SVG QR code (no image request: the CSP allows none from
    elsewhere, and none is needed). Dark on light whatever the page's colours, or phones
    cannot read it."""
    code = segno.make(url, error="m")
    svg = code.svg_inline(scale=4, border=4, dark="#000", light="#fff", svgclass="qr-code")
    return Markup(svg)  # segno escapes what it writes; the URL is the hub's own


async def telegram_section(user_id: str) -> dict[str, Any]:
    """What Settings → Telegram shows this person: whether the hub runs Telegram, their
    linked account, and the link they asked for while it is still usable."""
    account = await ChannelAccount.filter(user_id=user_id, surface=SURFACE).first()
    pending = session.get(SESSION_LINK)
    link = None
    if pending and pending.get("user") == user_id and account is None:
        expires_at = datetime.fromisoformat(pending["expiresAt"].replace("Z", "+00:00"))
        if expires_at > utcnow():
            link = {"url": pending["url"], "expires_at": expires_at, "qr": qr_svg(pending["url"])}
    if link is None:
        session.pop(SESSION_LINK, None)
    return {
        "configured": SURFACE in runtime_of(current_app).channels,
        "account": account,
        "link": link,
    }


def _settings_url(workspace_id: str) -> str:
    return url_for("pages.settings.show", workspace_id=workspace_id) + "#telegram"


@blueprint.get("/settings")
@login_required
async def my_settings() -> Any:
    """Settings of one's first workspace: the address the Telegram bot gives, which cannot
    know the workspace. The browser keeps the fragment (``#telegram``) across the redirect."""
    user = await current_user()
    assert user is not None
    workspace = await home_workspace(user)
    if workspace is None:
        return redirect(url_for("pages.accounts.home"))
    return redirect(url_for("pages.settings.show", workspace_id=workspace.id))


@blueprint.post("/w/<workspace_id>/settings/telegram/link")
@login_required
async def link(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    created = await runtime_of(current_app).link_account(user.id, SURFACE)
    session[SESSION_LINK] = {
        "user": user.id,
        "url": created["url"],
        "expiresAt": created["expiresAt"],
    }
    return redirect(_settings_url(workspace_id))


@blueprint.post("/w/<workspace_id>/settings/telegram/unlink")
@login_required
async def unlink_account(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    session.pop(SESSION_LINK, None)
    try:
        await unlink(user.id, SURFACE)
        await flash(_("Telegram unlinked: cards no longer go to that chat."))
    except NotFound as error:
        nothing = _("No Telegram account is linked.")
        await flash(f"{nothing} ({error.code})")
    return redirect(_settings_url(workspace_id))
