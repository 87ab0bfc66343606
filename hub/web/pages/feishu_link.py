"""Settings → Feishu: link this person's Feishu/Lark account by a one-time code sent to the
hub's bot in a one-to-one chat (``hub.web.pages.code_links``). With JavaScript on,
``static/account_link.js`` asks ``GET /api/v1/me/channels`` until the link went through.
"""

from __future__ import annotations

from typing import Any

from hub.web.pages.code_links import code_link_pages, code_link_section
from hub.web.pages.error_messages import N_

SURFACE = "feishu"

blueprint = code_link_pages(
    SURFACE,
    unlinked=N_("Feishu unlinked: cards no longer go to that chat."),
    nothing_linked=N_("No Feishu account is linked."),
)


async def feishu_section(user_id: str) -> dict[str, Any]:
    """What Settings → Feishu shows this person (``code_link_section``)."""
    return await code_link_section(SURFACE, user_id)
