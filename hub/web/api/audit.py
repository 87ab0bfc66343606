"""The workspace's audit trail: decisions, pairings, confirmations, revocations, cancels."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.log.events import MAX_SEQUENCE
from hub.core.people.audit import audit_page
from hub.host.identity import member_of
from hub.web.api.answers import AuditPage
from hub.web.api.base import PageQuery, query_args

blueprint = Blueprint("api_audit", __name__, url_prefix="/api/v1")


class AuditQuery(PageQuery):
    after: int = Field(
        0, ge=0, le=MAX_SEQUENCE, description="Return entries with a greater sequence."
    )
    limit: int = Field(200, ge=1, le=1000)


@blueprint.get("/workspaces/<ws>/audit")
@document_response(AuditPage)
@query_args(AuditQuery)
async def audit(ws: str, query: AuditQuery) -> dict[str, Any]:
    """Who decided, paired, confirmed, revoked or cancelled what, and when, in log order.
    Page with ``cursor`` = ``nextCursor`` (``null`` on the last page), as every list does,
    or with ``after`` = the last entry's ``sequence``, as the event log does."""
    await member_of(ws)
    found = await audit_page(ws, after=query.after, limit=query.limit, cursor=query.cursor)
    return {
        "entries": found.entries,
        "hasMore": found.next_cursor is not None,
        "nextCursor": found.next_cursor,
    }
