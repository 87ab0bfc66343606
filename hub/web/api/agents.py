"""The workspace's agents: list, look at one, confirm its name, revoke it."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.agents.registry import agent_view, confirm_agent, get_agent, list_agents, revoke_agent
from hub.host.identity import member_of
from hub.web.api.answers import AgentAnswer, AgentList
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_agents", __name__, url_prefix="/api/v1")


class Confirmation(ApiModel):
    name: str = Field(min_length=1, max_length=200)


@blueprint.get("/workspaces/<ws>/agents")
@document_response(AgentList)
async def agents(ws: str) -> dict[str, Any]:
    """Agents with ``status`` (pending, online, offline, revoked), last heartbeat and
    capabilities."""
    await member_of(ws)
    return {"agents": [agent_view(agent) for agent in await list_agents(ws)]}


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
