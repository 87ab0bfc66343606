"""Workspace approval-policy rules: list, add (checked like a card's policy), delete.

Which rule applies to a card is decided in ``hub.core.approvals.policies.matching_rule``, once, when
the card is asked.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from hub.core.approvals.expiry_approval import approve_on_expiry, refuse_rule
from hub.core.approvals.policies import member_ids
from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.store.policy_models import PolicyRule
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import iso
from hub.protocol.interactions import ApprovalPolicy, InteractionType, Risk

MAX_RULES = 100


def rule_view(rule: PolicyRule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "position": rule.position,
        "match": {"risk": rule.risk, "agentId": rule.agent_id, "cardType": rule.card_type},
        "policy": rule.policy,
        "createdBy": rule.created_by,
        "createdAt": iso(rule.created_at),
    }


async def list_rules(workspace_id: str) -> list[PolicyRule]:
    return await PolicyRule.filter(workspace_id=workspace_id).order_by("position", "created_at")


async def create_rule(
    workspace_id: str,
    *,
    policy: dict[str, Any],
    risk: str | None,
    agent_id: str | None,
    card_type: str | None,
    created_by: str,
    now: datetime,
) -> PolicyRule:
    """Add a rule after the existing ones; its policy is checked as a card's would be, and
    refused (``expiry_approval_not_allowed``) when it would approve on expiry cards of a
    risk the workspace's approval settings do not allow."""
    if risk is not None and risk not in {r.value for r in Risk}:
        raise InvalidInput(
            f"{risk!r} is not a risk.", code="invalid_rule", hint="Use low, medium or high."
        )
    if card_type is not None and card_type not in {t.value for t in InteractionType}:
        raise InvalidInput(
            f"{card_type!r} is not a card type.",
            code="invalid_rule",
            hint="Use approval, review, choice or input.",
        )
    try:
        checked = ApprovalPolicy.model_validate(policy)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "policy"
        raise InvalidInput(
            f"The policy is not valid: {where}: {problem['msg']}",
            code="invalid_policy",
            hint="See docs/protocol.md, 'Approval policies', for the fields.",
        ) from None
    if (checked.mode == "quorum" or checked.on_expiry in ("deny", "approve")) and card_type in (
        InteractionType.CHOICE.value,
        InteractionType.INPUT.value,
    ):
        raise InvalidInput(
            "A quorum or an expiry decision needs approval or review cards.",
            code="invalid_rule",
            hint="Match cardType approval or review, or leave it empty.",
        )
    existing = await PolicyRule.filter(workspace_id=workspace_id).count()
    if existing >= MAX_RULES:
        raise InvalidInput(
            f"A workspace holds at most {MAX_RULES} policy rules.",
            code="too_many_rules",
            hint="Delete rules that no longer apply.",
        )
    async with in_transaction() as connection:
        refuse_rule(risk, checked, await approve_on_expiry(workspace_id, connection))
        # Named people must be able to answer now; a rule naming a stranger blocks cards.
        await member_ids(workspace_id, checked.approvers, connection)
        await member_ids(workspace_id, checked.escalate_to, connection)
        return await PolicyRule.create(
            using_db=connection,
            id=new_id("policy_rule"),
            workspace_id=workspace_id,
            position=existing,
            risk=risk,
            agent_id=agent_id,
            card_type=card_type,
            policy=checked.wire(),
            created_by=created_by,
            created_at=now,
        )


async def delete_rule(workspace_id: str, rule_id: str) -> None:
    deleted = await PolicyRule.filter(id=rule_id, workspace_id=workspace_id).delete()
    if not deleted:
        raise NotFound(
            f"Policy rule {rule_id} does not exist in this workspace.", code="rule_not_found"
        )


__all__ = ["MAX_RULES", "create_rule", "delete_rule", "list_rules", "rule_view"]
