"""Settings → Telegram: link this person's Telegram account, see it, unlink it.

The pages of ``hub.web.pages.code_links``, where the one-time link is a deep link into a
chat with the hub's bot, shown as a link and as a QR code to scan with a phone. With
JavaScript on, ``static/account_link.js`` asks ``GET /api/v1/me/channels`` until the link
went through.

Names come from Telegram (the sender's own choice): the template escapes them.
"""

from __future__ import annotations

from typing import Any

import segno
from markupsafe import Markup
from quart import redirect, url_for

from hub.web.pages.code_links import code_link_pages, code_link_section
from hub.web.pages.error_messages import N_
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import home_workspace

SURFACE = "telegram"

blueprint = code_link_pages(
    SURFACE,
    unlinked=N_("Telegram unlinked: cards no longer go to that chat."),
    nothing_linked=N_("No Telegram account is linked."),
)


def qr_svg(url: str) -> Markup:
    """The deep link as an inline SVG QR code (no image request: the CSP allows none from
    elsewhere, and none is needed). Dark on light whatever the page's colours, or phones
    cannot read it."""
    code = segno.make(url, error="m")
    svg = code.svg_inline(scale=4, border=4, dark="#000", light="#fff", svgclass="qr-code")
    return Markup(svg)  # segno escapes what it writes; the URL is the hub's own


async def telegram_section(user_id: str) -> dict[str, Any]:
    """What Settings → Telegram shows this person (``code_link_section``), the pending
    link with its QR code."""
    section = await code_link_section(SURFACE, user_id)
    if section["link"] is not None:
        section["link"]["qr"] = qr_svg(section["link"]["url"])
    return section


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
