"""Search (``/w/<ws>/search?q=``): the workspace's tasks, messages, cards and agents that
the words find, best match first, a page at a time.

What is found is shown as text: agents write much of it, so it goes through the templates'
escaping like everything else, the words found marked by splitting the text into pieces
rather than by writing markup into it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from quart import Blueprint, request

from hub.core.errors import HubError
from hub.core.work.search import MAX_QUERY_LENGTH, hit_view, search, search_words
from hub.host.templates import render_template
from hub.web.pages.error_messages import for_person
from hub.web.pages.paging import page_of
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for
from hub.web.search_links import page_of_hit

blueprint = Blueprint("search", __name__)

PAGE_SIZE = 30


def marked(text: str, words: Sequence[str]) -> list[tuple[str, bool]]:
    """``text`` in pieces, each with whether it is where a searched word begins a word of
    the text; the template marks those, each piece escaped."""
    if not text:
        return []
    pattern = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    pieces: list[tuple[str, bool]] = []
    end = 0
    for found in re.finditer(rf"(?<![^\W_])(?:{pattern})", text, flags=re.IGNORECASE):
        if found.start() > end:
            pieces.append((text[end : found.start()], False))
        pieces.append((found.group(), True))
        end = found.end()
    if end < len(text):
        pieces.append((text[end:], False))
    return pieces


@blueprint.get("/w/<workspace_id>/search")
@login_required
async def show(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    query = request.args.get("q", "")[: MAX_QUERY_LENGTH * 2]
    results: list[dict[str, Any]] = []
    more: str | None = None
    paged = False
    error = None
    status = 200
    if query.strip():
        try:
            words = search_words(query)
            shown, paged = await page_of(
                lambda cursor: search(frame.workspace.id, query, limit=PAGE_SIZE, cursor=cursor)
            )
        except HubError as refused:
            error, status = for_person(refused), refused.status
        else:
            more = shown.next_cursor
            for hit in shown.items:
                view = hit_view(hit, words)
                view["url"] = page_of_hit(frame.workspace.id, hit)
                view["title_pieces"] = marked(view["title"] or "", words)
                view["text_pieces"] = marked(view["text"] or "", words)
                results.append(view)
    html = await render_template(
        "pages/search.html",
        **frame.context(),
        query=query,
        results=results,
        older=more,
        paged=paged,
        error=error,
        # A ranked list that reordered itself under the reader would lose their place.
        no_refresh=True,
    )
    return html, status
