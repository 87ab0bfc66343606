"""The inbox: waiting for me, needs attention, recently done, with counts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from quart import Blueprint

from hub.core.work.inbox import DEFAULT_LIMIT, inbox, reader_of
from hub.host.identity import member_of
from hub.protocol.interactions import Risk
from hub.web.api.base import PageQuery, query_args

blueprint = Blueprint("api_inbox", __name__, url_prefix="/api/v1")

Section = Literal["waitingForMe", "needsAttention", "recentlyDone"]


class InboxQuery(PageQuery):
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=200, description="Items per section.")
    agent_id: str | None = Field(None, description="Only this agent's cards and tasks.")
    risk: Risk | None = Field(None, description="Only the cards of this risk.")
    section: Section | None = Field(
        None,
        description="Answer this section alone, its page after ``cursor`` (a cursor of "
        "``nextCursors``), with ``nextCursor``.",
    )


@blueprint.get("/workspaces/<ws>/inbox")
@query_args(InboxQuery)
async def workspace_inbox(ws: str, query: InboxQuery) -> dict[str, Any]:
    """The counts and each section's first page, with ``nextCursors`` by section; ask for
    the next page of one with ``section`` and its cursor. "Waiting for me" holds the cards
    the caller may answer and has not voted on (none for a viewer)."""
    _, membership = await member_of(ws)
    return await inbox(
        ws,
        reader=reader_of(membership),
        limit=query.limit,
        agent_id=query.agent_id,
        risk=query.risk,
        section=query.section,
        cursor=query.cursor,
    )
