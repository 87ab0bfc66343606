"""The workspace's audit trail: decisions, pairings, confirmations, revocations, cancels."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.log.events import MAX_SEQUENCE
from hub.core.people.audit import audit_trail
from hub.host.identity import member_of
from hub.web.api.answers import AuditPage
from hub.web.api.base import ApiModel, query_args

blueprint = Blueprint("api_audit", __name__, url_prefix="/api/v1")


class AuditQuery(ApiModel):
    after: int = Field(
        0, ge=0, le=MAX_SEQUENCE, description="Return entries with a greater sequence."
    )
    limit: int = Field(200, ge=1, le=1000)


@blueprint.get("/workspaces/<ws>/audit")
@document_response(AuditPage)
@query_args(AuditQuery)
async def audit(ws: str, query: AuditQuery) -> dict[str, Any]:
    """Who decided, paired, confirmed, revoked or cancelled what, and when, in log order.
    Page with ``after`` = the last entry's ``sequence``."""
    await member_of(ws)
    entries = await audit_trail(ws, query.after, query.limit)
    return {"entries": entries, "hasMore": len(entries) == query.limit}
