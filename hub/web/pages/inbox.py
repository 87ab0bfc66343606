"""The inbox (spec §6): waiting for me, failed or needs attention, recently done."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, render_template, url_for

from hub.core.work.inbox import inbox
from hub.core.work.interactions import get_interaction
from hub.web.pages.interactions import card_views
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for, workspace_of

blueprint = Blueprint("inbox", __name__)


@blueprint.get("/w/<workspace_id>/inbox")
@login_required
async def show(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    workspace = await workspace_of(user, workspace_id)
    view = await inbox(workspace.id)
    frame = await frame_for(user, workspace.id, inbox_view=view)
    interactions = [
        await get_interaction(workspace.id, item["interaction"]["id"])
        for item in view["waitingForMe"]
    ]
    return await render_template(
        "pages/inbox.html",
        **frame.context(),
        inbox=view,
        cards=await card_views(workspace.id, interactions),
        next_url=url_for("pages.inbox.show", workspace_id=workspace.id),
    )
