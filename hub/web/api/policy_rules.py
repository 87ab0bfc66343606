"""Workspace approval-policy rules: which policy a card gets when its agent sent none."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from quart import Blueprint

from hub.core.approvals.rules import create_rule, delete_rule, list_rules, rule_view
from hub.core.errors import Forbidden
from hub.core.store.models import Role
from hub.host.identity import Caller, member_of
from hub.protocol.clock import utcnow
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_policy_rules", __name__, url_prefix="/api/v1")


class NewPolicyRule(ApiModel):
    """Match cards by ``risk``, ``agentId`` and ``cardType`` (each optional: unset matches
    every card) and give them ``policy`` (an ApprovalPolicy, see docs/protocol.md). Rules are
    tried in the order they were added; the first match applies."""

    risk: Literal["low", "medium", "high"] | None = None
    agent_id: str | None = Field(None, max_length=40)
    card_type: Literal["approval", "review", "choice", "input"] | None = None
    policy: dict[str, Any]


async def owner_of(ws: str) -> Caller:
    caller, membership = await member_of(ws, write=True)
    if membership.role != Role.OWNER:
        raise Forbidden(
            "Only owners of a workspace change its approval policies.",
            code="owners_only",
            hint="Ask an owner of the workspace to change the rule.",
        )
    return caller


@blueprint.get("/workspaces/<ws>/policy-rules")
async def rules(ws: str) -> dict[str, Any]:
    """The workspace's approval-policy rules, in the order they are tried."""
    await member_of(ws)
    return {"rules": [rule_view(rule) for rule in await list_rules(ws)]}


@blueprint.post("/workspaces/<ws>/policy-rules")
@json_body(NewPolicyRule)
async def add_rule(ws: str, body: NewPolicyRule) -> tuple[dict[str, Any], int]:
    """Add a rule (owners only). 422 ``invalid_policy`` / ``unknown_approver`` when the
    policy is not valid or names someone who cannot answer here."""
    caller = await owner_of(ws)
    rule = await create_rule(
        ws,
        policy=body.policy,
        risk=body.risk,
        agent_id=body.agent_id,
        card_type=body.card_type,
        created_by=caller.actor,
        now=utcnow(),
    )
    return rule_view(rule), 201


@blueprint.delete("/workspaces/<ws>/policy-rules/<rule_id>")
async def remove_rule(ws: str, rule_id: str) -> tuple[str, int]:
    """Delete a rule (owners only). Cards asked before keep the policy they got."""
    await owner_of(ws)
    await delete_rule(ws, rule_id)
    return "", 204
