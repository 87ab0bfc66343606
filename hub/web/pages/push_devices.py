"""Settings → Push notifications: the person's devices with push on, a test, turning off.

Turning push on happens in the browser itself (``static/app.js``: the browser subscribes,
then posts to ``/api/v1/me/push-subscriptions``); these forms are the rest, without script.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, redirect, url_for

from hub.channels.push.channel import running_push
from hub.channels.push.sender import PushFailed, Sent
from hub.channels.runtime import runtime_of
from hub.core.errors import HubError
from hub.core.notify.push_subscriptions import (
    subscription_of,
    subscription_view,
    subscriptions_of,
    unsubscribe,
)
from hub.web.pages.error_messages import said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("push_devices", __name__)


async def push_context(user_id: str) -> dict[str, Any]:
    return {
        "available": running_push(runtime_of(current_app).channels) is not None,
        "devices": [subscription_view(row) for row in await subscriptions_of(user_id)],
    }


def _back(workspace_id: str) -> Any:
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id) + "#push")


@blueprint.post("/w/<workspace_id>/settings/push/<subscription_id>/test")
@login_required
async def test(workspace_id: str, subscription_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    row = await subscription_of(user.id, subscription_id)
    channel = running_push(runtime_of(current_app).channels)
    if row is None or channel is None:
        await flash(_("That device does not have push on any more."))
        return _back(workspace_id)
    recipient = await runtime_of(current_app).recipient(user, "push")
    try:
        sent = await channel.send_test(recipient, row)
    except PushFailed:
        await flash(_("The device's push service did not take it; try again in a minute."))
        return _back(workspace_id)
    messages = {
        Sent.SENT: _("Test sent: it should show on that device in a moment."),
        Sent.GONE: _("That device's push service no longer knows it, so it was removed."),
        Sent.REFUSED: _("The push service refused it: turn push off and on again there."),
    }
    await flash(messages[sent])
    return _back(workspace_id)


@blueprint.post("/w/<workspace_id>/settings/push/<subscription_id>/remove")
@login_required
async def remove(workspace_id: str, subscription_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    try:
        await unsubscribe(user.id, subscription_id)
        await flash(_("Push is off on that device."))
    except HubError as error:
        await flash(said(error))
    return _back(workspace_id)
