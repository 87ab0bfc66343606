"""The inbox: waiting for me, needs attention, recently done, with counts."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint

from hub.core.work.inbox import DEFAULT_LIMIT, inbox
from hub.host.identity import member_of
from hub.protocol.interactions import Risk
from hub.web.api.base import ApiModel, query_args

blueprint = Blueprint("api_inbox", __name__, url_prefix="/api/v1")


class InboxQuery(ApiModel):
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=200, description="Items per section.")
    agent_id: str | None = Field(None, description="Only this agent's cards and tasks.")
    risk: Risk | None = Field(None, description="Only the cards of this risk.")


@blueprint.get("/workspaces/<ws>/inbox")
@query_args(InboxQuery)
async def workspace_inbox(ws: str, query: InboxQuery) -> dict[str, Any]:
    await member_of(ws)
    return await inbox(ws, limit=query.limit, agent_id=query.agent_id, risk=query.risk)
