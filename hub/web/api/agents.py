"""The workspace's agents: list, look at one, confirm its name, revoke it."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.agents.registry import agent_view, agents_page, confirm_agent, get_agent, revoke_agent
from hub.host.identity import member_of
from hub.web.api.answers import AgentAnswer, AgentList
from hub.web.api.base import ApiModel, PageQuery, json_body, query_args

blueprint = Blueprint("api_agents", __name__, url_prefix="/api/v1")


class AgentsQuery(PageQuery):
    limit: int = Field(100, ge=1, le=500)


class Confirmation(ApiModel):
    name: str = Field(min_length=1, max_length=200)


@blueprint.get("/workspaces/<ws>/agents")
@document_response(AgentList)
@query_args(AgentsQuery)
async def agents(ws: str, query: AgentsQuery) -> dict[str, Any]:
    """Agents with ``status`` (pending, online, offline, revoked), last heartbeat and
    capabilities, the newest paired first, a page at a time (``nextCursor``)."""
    await member_of(ws)
    found = await agents_page(ws, limit=query.limit, cursor=query.cursor)
    return {"agents": [agent_view(a) for a in found.items], "nextCursor": found.next_cursor}


@blueprint.get("/workspaces/<ws>/agents/<agent_id>")
@document_response(AgentAnswer)
async def agent(ws: str, agent_id: str) -> dict[str, Any]:
    await member_of(ws)
    return agent_view(await get_agent(ws, agent_id))


@blueprint.post("/workspaces/<ws>/agents/<agent_id>/confirm")
@document_response(AgentAnswer)
@json_body(Confirmation)
async def confirm(ws: str, agent_id: str, body: Confirmation) -> dict[str, Any]:
    """Finish binding a paired agent under the name you confirm (again: rename it)."""
    caller, _ = await member_of(ws, write=True)
    return agent_view(await confirm_agent(ws, agent_id, body.name, by=caller.actor))


@blueprint.post("/workspaces/<ws>/agents/<agent_id>/revoke")
@document_response(AgentAnswer)
async def revoke(ws: str, agent_id: str) -> dict[str, Any]:
    """Revoke the agent's credential for good; its connection is closed."""
    caller, _ = await member_of(ws, write=True)
    return agent_view(await revoke_agent(ws, agent_id, by=caller.actor))
