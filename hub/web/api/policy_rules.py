"""Workspace approval-policy rules (which policy a card gets when its agent sent none) and
the approval settings that limit every policy, a rule's or an agent's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from quart import Blueprint

from hub.core.approvals.expiry_approval import (
    approve_on_expiry,
    settings_view,
    update_approve_on_expiry,
)
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


class ApprovalSettingsBody(ApiModel):
    """``approveOnExpiry``: the risks on which a card whose policy says ``onExpiry: approve``
    may approve itself when it expires (default low and medium; a card without a risk
    counts as medium). An empty list keeps every expiry decision for people."""

    approve_on_expiry: list[Literal["low", "medium", "high"]] = Field(max_length=3)


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


@blueprint.get("/workspaces/<ws>/approval-settings")
async def approval_settings(ws: str) -> dict[str, Any]:
    """The workspace's limits on approval policies: ``{approveOnExpiry: [risk]}``."""
    await member_of(ws)
    return settings_view(await approve_on_expiry(ws))


@blueprint.put("/workspaces/<ws>/approval-settings")
@json_body(ApprovalSettingsBody)
async def change_approval_settings(ws: str, body: ApprovalSettingsBody) -> dict[str, Any]:
    """Set on which risks an expiry may approve a card (owners only). Cards asked before
    keep the policy they got; an agent asking for ``onExpiry: approve`` on any other risk is
    refused (``expiry_approval_not_allowed``). 409 ``rule_approves_on_expiry`` while a
    policy rule would still do it."""
    caller = await owner_of(ws)
    risks = await update_approve_on_expiry(
        ws, list(body.approve_on_expiry), by=caller.actor, now=utcnow()
    )
    return settings_view(risks)
