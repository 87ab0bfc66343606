"""Settings → Feishu: link this person's Feishu/Lark account, see it, unlink it.

"Link Feishu" asks the channel runtime for a one-time code (``link_account``, the same as
``POST /api/v1/me/channels/feishu/link``); the person sends it to the hub's bot in Feishu, in
a one-to-one chat, and the bot links whoever sent it. The pending code is kept in this
browser's session, next to the sign-in it belongs to, so the page shows it again after a
reload until it is used or expires; reloading is how one sees that the link went through.
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

SURFACE = "feishu"
SESSION_LINK = "feishu_link"  # session[SESSION_LINK]: the pending code, see above

blueprint = Blueprint("feishu_link", __name__)


async def feishu_section(user_id: str) -> dict[str, Any]:
    """What Settings → Feishu shows this person: whether the hub runs Feishu, their linked
    account, and the code they asked for while it still works."""
    account = await ChannelAccount.filter(user_id=user_id, surface=SURFACE).first()
    pending = session.get(SESSION_LINK)
    link = None
    if pending and pending.get("user") == user_id and account is None:
        expires_at = datetime.fromisoformat(pending["expiresAt"].replace("Z", "+00:00"))
        if expires_at > utcnow():
            link = {"code": pending["token"], "url": pending["url"], "expires_at": expires_at}
    if link is None:
        session.pop(SESSION_LINK, None)
    return {
        "configured": SURFACE in runtime_of(current_app).channels,
        "account": account,
        "link": link,
    }


def _settings_url(workspace_id: str) -> str:
    return url_for("pages.settings.show", workspace_id=workspace_id) + "#feishu"


@blueprint.post("/w/<workspace_id>/settings/feishu/link")
@login_required
async def link(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    created = await runtime_of(current_app).link_account(user.id, SURFACE)
    session[SESSION_LINK] = {
        "user": user.id,
        "token": created["token"],
        "url": created["url"],
        "expiresAt": created["expiresAt"],
    }
    return redirect(_settings_url(workspace_id))


@blueprint.post("/w/<workspace_id>/settings/feishu/unlink")
@login_required
async def unlink_account(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    session.pop(SESSION_LINK, None)
    try:
        await unlink(user.id, SURFACE)
        await flash(_("Feishu unlinked: cards no longer go to that chat."))
    except NotFound as error:
        nothing = _("No Feishu account is linked.")
        await flash(f"{nothing} ({error.code})")
    return redirect(_settings_url(workspace_id))
