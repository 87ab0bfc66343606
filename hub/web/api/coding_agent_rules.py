"""The workspace's deny rules for its coding agents: the calls no one may approve.

``GET`` for any member, ``PUT`` (the whole list) for owners. The rules are in Claude Code's
syntax and checked by the core (``hub.core.approvals.coding_agent_rules``); a bad one is
refused with its number, and nothing is saved.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint

from hub.core.approvals.coding_agent_rules import (
    MAX_RULES,
    deny_rules,
    rules_view,
    update_deny_rules,
)
from hub.host.identity import member_of
from hub.protocol.clock import utcnow
from hub.web.api.base import ApiModel, json_body
from hub.web.api.policy_rules import owner_of

blueprint = Blueprint("api_coding_agent_rules", __name__, url_prefix="/api/v1")


class CodingAgentRulesBody(ApiModel):
    """``deny``: tool calls the workspace's coding agents (Claude Code, Codex) may never
    make, in Claude Code's rule syntax: ``Bash(git push --force:*)``, ``Edit(//etc/**)``,
    ``WebFetch``. A matching call is refused before anyone is asked. Replaces the list."""

    # Room for blank lines and repeats, which are dropped; the core counts what is kept.
    deny: list[str] = Field(max_length=MAX_RULES * 2)


@blueprint.get("/workspaces/<ws>/coding-agent-rules")
async def rules(ws: str) -> dict[str, Any]:
    """The workspace's rules for its coding agents: ``{deny: [rule]}``."""
    await member_of(ws)
    return rules_view(await deny_rules(ws))


@blueprint.put("/workspaces/<ws>/coding-agent-rules")
@json_body(CodingAgentRulesBody)
async def change_rules(ws: str, body: CodingAgentRulesBody) -> dict[str, Any]:
    """Set the rules (owners only); they apply to the next call each agent makes. Blank
    lines and repeats are dropped. 422 ``invalid_rule`` names the first rule that is not
    one (a rule is at most 500 characters and names no ``~``), ``too_many_rules`` past 200."""
    caller = await owner_of(ws)
    return rules_view(await update_deny_rules(ws, body.deny, by=caller.actor, now=utcnow()))
