"""Whether a card may approve itself when it expires: the workspace decides, by risk.

A policy's ``onExpiry: approve`` turns silence into a yes. An agent may ask for that, but it
is the people's call on which cards: by default an expiry may approve low- and medium-risk
cards and never a high-risk one, and a workspace's owners can widen or narrow that to any
set of risks, none included (``approveOnExpiry`` of ``/approval-settings``). A card that
states no risk counts as medium.

The limit is kept where a policy is chosen: an agent's card whose policy would approve on
expiry where the workspace does not allow it is refused as it is asked (every way an agent
asks ends in ``interaction.requested``), and a rule, or a change of the settings, that would
let one through is refused as it is made. Nothing is quietly downgraded: the agent learns
at once why, and can ask again without it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hub.core.errors import Conflict, InvalidInput
from hub.core.store.policy_models import ApprovalSettings, PolicyRule
from hub.core.store.transactions import in_transaction
from hub.protocol.interactions import ApprovalPolicy, Risk, risk_of

Connection = Any
RISKS = tuple(r.value for r in Risk)
DEFAULT_APPROVE_ON_EXPIRY = ("low", "medium")


async def approve_on_expiry(workspace_id: str, connection: Connection = None) -> list[str]:
    """The risks on which ``workspace_id``'s cards may approve themselves on expiry."""
    query = ApprovalSettings.filter(workspace_id=workspace_id)
    if connection is not None:
        query = query.using_db(connection)
    row = await query.first()
    return list(DEFAULT_APPROVE_ON_EXPIRY) if row is None else list(row.approve_on_expiry)


def settings_view(risks: list[str]) -> dict[str, Any]:
    return {"approveOnExpiry": [r for r in RISKS if r in risks]}


async def ensure_expiry_may_approve(
    workspace_id: str, policy: ApprovalPolicy, risk: Risk | None, connection: Connection
) -> None:
    """Refuse ``policy`` for a card of ``risk`` when its expiry would approve the card and
    the workspace does not allow that on this risk. Raises ``InvalidInput``
    (``expiry_approval_not_allowed``)."""
    if policy.on_expiry != "approve":
        return
    level = risk_of(risk).value
    if level in await approve_on_expiry(workspace_id, connection):
        return
    raise InvalidInput(
        f"This workspace does not let a {level}-risk card approve itself when it expires "
        "(onExpiry: approve).",
        code="expiry_approval_not_allowed",
        hint="Ask without onExpiry, or with onExpiry deny or expire, so a person decides; "
        "a workspace owner can allow it per risk in the approval settings.",
    )


def refuse_rule(rule_risk: str | None, policy: ApprovalPolicy, allowed: list[str]) -> None:
    """Refuse a rule whose policy approves on expiry cards of a risk that is not allowed;
    a rule without a risk matches every risk."""
    if policy.on_expiry != "approve":
        return
    matched = [rule_risk] if rule_risk else list(RISKS)
    forbidden = [r for r in matched if r not in allowed]
    if forbidden:
        raise InvalidInput(
            "This rule would let cards of risk "
            + ", ".join(forbidden)
            + " approve themselves when they expire, which the workspace does not allow.",
            code="expiry_approval_not_allowed",
            hint="Match a risk the approval settings allow, or use onExpiry deny or expire.",
        )


async def update_approve_on_expiry(
    workspace_id: str, risks: list[str], *, by: str, now: datetime
) -> list[str]:
    """Set the risks on which an expiry may approve a card; returns them.

    Raises ``InvalidInput`` (``invalid_settings``) for a risk that is not one, and
    ``Conflict`` (``rule_approves_on_expiry``) while a policy rule approves on expiry a risk
    no longer allowed: that rule would go on deciding by silence."""
    unknown = [r for r in risks if r not in RISKS]
    if unknown:
        raise InvalidInput(
            f"{unknown[0]!r} is not a risk.",
            code="invalid_settings",
            hint="List some of low, medium and high (or none).",
        )
    chosen = [r for r in RISKS if r in risks]
    async with in_transaction() as connection:
        rules = await PolicyRule.filter(workspace_id=workspace_id).using_db(connection)
        for rule in rules:
            try:
                refuse_rule(rule.risk, ApprovalPolicy.model_validate(rule.policy), chosen)
            except InvalidInput:
                raise Conflict(
                    f"Policy rule {rule.id} approves cards on expiry on a risk this would no "
                    "longer allow.",
                    code="rule_approves_on_expiry",
                    hint="Delete that rule (or add it again with another onExpiry) first.",
                ) from None
        updated = await (
            ApprovalSettings.filter(workspace_id=workspace_id)
            .using_db(connection)
            .update(approve_on_expiry=chosen, updated_by=by, updated_at=now)
        )
        if not updated:
            await ApprovalSettings.create(
                using_db=connection,
                workspace_id=workspace_id,
                approve_on_expiry=chosen,
                updated_by=by,
                updated_at=now,
            )
    return chosen


__all__ = [
    "DEFAULT_APPROVE_ON_EXPIRY",
    "approve_on_expiry",
    "ensure_expiry_may_approve",
    "refuse_rule",
    "settings_view",
    "update_approve_on_expiry",
]
