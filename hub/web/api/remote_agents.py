"""Remote (A2A) agents: add one by URL, list those added or pinned.

The A2A connector plugin does the talking (fetching the card); it registers itself under
``REMOTE_AGENTS_EXTENSION`` when ``LINEUP_A2A_ENABLED`` is on. Without it these routes
answer ``404 a2a_disabled``, saying how to turn it on.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint, current_app
from quart_schema import document_response

from hub.core.agents.remote import (
    REMOTE_AGENTS_EXTENSION,
    RemoteAgentAdder,
    list_remote_agents,
    remote_agent_view,
)
from hub.core.errors import NotFound
from hub.host.identity import member_of
from hub.web.api.answers import RemoteAgentAnswer, RemoteAgentList
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_remote_agents", __name__, url_prefix="/api/v1")


class NewRemoteAgent(ApiModel):
    url: str = Field(min_length=1, max_length=2000)
    pin: bool = False
    # The API key or bearer token the agent's card asks for: stored sealed, never shown.
    secret: str | None = Field(None, min_length=1, max_length=4000)


def _connector() -> RemoteAgentAdder:
    connector = current_app.extensions.get(REMOTE_AGENTS_EXTENSION)
    if connector is None:
        raise NotFound(
            "Remote (A2A) agents are turned off on this hub.",
            code="a2a_disabled",
            hint="The hub's operator can turn them on with LINEUP_A2A_ENABLED=true.",
        )
    return connector  # type: ignore[no-any-return]


@blueprint.post("/workspaces/<ws>/remote-agents")
@document_response(RemoteAgentAnswer, 201)
@json_body(NewRemoteAgent)
async def add(ws: str, body: NewRemoteAgent) -> tuple[dict[str, Any], int]:
    """Add a remote A2A agent by its address; the hub fetches and shows its card."""
    caller, _ = await member_of(ws, write=True)
    view = await _connector().add_remote_agent(
        ws, body.url, pinned=body.pin, secret=body.secret, by=caller.actor
    )
    return view, 201


@blueprint.get("/workspaces/<ws>/remote-agents")
@document_response(RemoteAgentList)
async def listing(ws: str) -> dict[str, Any]:
    """The remote agents people of this workspace added or the operator pinned: no others."""
    await member_of(ws)
    _connector()
    return {"agents": [remote_agent_view(a, r) for a, r in await list_remote_agents(ws)]}
