"""Search across the workspace: tasks, messages, cards and agents, best match first."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint, current_app
from quart_schema import document_response

from hub.core.work.search import hit_view, search, search_words
from hub.host.identity import member_of
from hub.host.settings import settings_of
from hub.web.api.answers import SearchResults
from hub.web.api.base import PageQuery, query_args
from hub.web.search_links import page_of_hit

blueprint = Blueprint("api_search", __name__, url_prefix="/api/v1")


class SearchQuery(PageQuery):
    # Left unchecked here: the core refuses an empty, too long or wordless query with
    # ``400 bad_search_query`` and says what it takes, which a length check of the schema
    # (a 422 about a field) would not.
    q: str = Field("", description="Words to find; punctuation and operators are plain text.")
    limit: int = Field(50, ge=1, le=200)


@blueprint.get("/workspaces/<ws>/search")
@document_response(SearchResults)
@query_args(SearchQuery)
async def search_workspace(ws: str, query: SearchQuery) -> dict[str, Any]:
    """What ``q`` finds among the workspace's tasks, messages, cards and agents, a page at a
    time (``nextCursor``). Every word must begin a word of the result (or of its id); an
    agent is also found by any part of its name. A query with no word, more than eight, or
    over 200 characters is ``400 bad_search_query``."""
    await member_of(ws)
    found = await search(ws, query.q, limit=query.limit, cursor=query.cursor)
    words = search_words(query.q)
    public_url = settings_of(current_app).resolved_public_url.rstrip("/")
    items = [
        {**hit_view(hit, words), "url": public_url + page_of_hit(ws, hit)} for hit in found.items
    ]
    return {"items": items, "nextCursor": found.next_cursor}
