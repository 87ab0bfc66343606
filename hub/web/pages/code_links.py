"""Settings → Telegram, Slack, Feishu: link a person's account on a platform by a one-time
code, see it, unlink it. One set of pages for each platform linked this way (Telegram's
code travels inside a deep link to the bot).

"Link" asks the channel runtime for a one-time code (``link_account``, the same as
``POST /api/v1/me/channels/<surface>/link``); the person sends it to the hub's bot on the
platform, and the bot links whoever sent it. The pending code is kept in this browser's
session, next to the sign-in it belongs to, so the page shows it again after a reload until
it is used or expires: with JavaScript off, reloading is how one sees that the link went
through.

Names come from the platform (the person's own choice): the templates escape them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from quart import Blueprint, current_app, flash, redirect, session, url_for

from hub.channels.runtime import runtime_of
from hub.core.errors import NotFound
from hub.core.notify.channel_accounts import unlink
from hub.core.store.notification_models import ChannelAccount
from hub.protocol.clock import utcnow
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for


def _session_key(surface: str) -> str:
    return f"{surface}_link"  # session[key]: the pending code, see above


async def code_link_section(surface: str, user_id: str) -> dict[str, Any]:
    """What Settings shows this person for ``surface``: whether the hub runs it, their
    linked account, and the code they asked for while it still works."""
    key = _session_key(surface)
    account = await ChannelAccount.filter(user_id=user_id, surface=surface).first()
    pending = session.get(key)
    link = None
    if pending and pending.get("user") == user_id and account is None:
        expires_at = datetime.fromisoformat(pending["expiresAt"].replace("Z", "+00:00"))
        if expires_at > utcnow():
            link = {"code": pending["token"], "url": pending["url"], "expires_at": expires_at}
    if link is None:
        session.pop(key, None)
    return {
        "configured": surface in runtime_of(current_app).channels,
        "account": account,
        "link": link,
    }


def code_link_pages(surface: str, *, unlinked: str, nothing_linked: str) -> Blueprint:
    """The blueprint ``<surface>_link`` that links and unlinks on ``surface``;
    ``unlinked`` and ``nothing_linked`` are the sentences (marked with ``N_``) the page
    flashes, translated when shown."""
    key = _session_key(surface)
    blueprint = Blueprint(f"{surface}_link", __name__)

    def settings_url(workspace_id: str) -> str:
        return url_for("pages.settings.show", workspace_id=workspace_id) + f"#{surface}"

    @blueprint.post(f"/w/<workspace_id>/settings/{surface}/link")
    @login_required
    async def link(workspace_id: str) -> Any:
        user = await current_user()
        assert user is not None
        await frame_for(user, workspace_id)
        created = await runtime_of(current_app).link_account(user.id, surface)
        session[key] = {
            "user": user.id,
            "token": created["token"],
            "url": created["url"],
            "expiresAt": created["expiresAt"],
        }
        return redirect(settings_url(workspace_id))

    @blueprint.post(f"/w/<workspace_id>/settings/{surface}/unlink")
    @login_required
    async def unlink_account(workspace_id: str) -> Any:
        user = await current_user()
        assert user is not None
        await frame_for(user, workspace_id)
        session.pop(key, None)
        try:
            await unlink(user.id, surface)
            await flash(_(unlinked))
        except NotFound as error:
            await flash(f"{_(nothing_linked)} ({error.code})")
        return redirect(settings_url(workspace_id))

    return blueprint
