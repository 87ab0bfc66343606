"""Expiry approving a card: allowed by the workspace per risk, refused as the card is asked."""

from __future__ import annotations

import pytest

from hub.core.approvals.expiry_approval import approve_on_expiry, update_approve_on_expiry
from hub.core.approvals.rules import create_rule
from hub.core.errors import Conflict, InvalidInput
from hub.core.log.events import last_sequence
from hub.core.store.models import Interaction
from hub.protocol.clock import utcnow
from tests.core.approvals.test_policies import asked

APPROVE = {"onExpiry": "approve"}
LATER = "2099-01-01T00:00:00Z"


async def test_a_high_risk_card_may_not_approve_itself_by_default(make_user) -> None:  # type: ignore[no-untyped-def]
    _, workspace = await make_user("owner")
    await asked(workspace, risk="low", policy=APPROVE, expiresAt=LATER)
    await asked(workspace, policy=APPROVE, expiresAt=LATER)  # no risk: counts as medium
    before = await last_sequence(workspace.id)
    with pytest.raises(InvalidInput) as refused:
        await asked(workspace, risk="high", policy=APPROVE, expiresAt=LATER)
    assert refused.value.code == "expiry_approval_not_allowed" and refused.value.hint
    # Only the refused card's own task and acceptance were logged: no card.
    assert await last_sequence(workspace.id) == before + 2
    assert await Interaction.filter(workspace_id=workspace.id).count() == 2


async def test_owners_choose_the_risks_and_rules_follow_them(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    now, by = utcnow(), f"user:{owner.id}"
    assert await approve_on_expiry(workspace.id) == ["low", "medium"]
    await update_approve_on_expiry(workspace.id, ["high"], by=by, now=now)
    await asked(workspace, risk="high", policy=APPROVE, expiresAt=LATER)
    for risk in ("low", "medium"):
        with pytest.raises(InvalidInput):
            await asked(workspace, risk=risk, policy=APPROVE, expiresAt=LATER)

    # A rule may not do what the settings forbid, and the settings may not leave one behind.
    with pytest.raises(InvalidInput) as refused:
        await create_rule(
            workspace.id, policy=APPROVE, risk="low", agent_id=None, card_type=None,
            created_by=by, now=now,
        )  # fmt: skip
    assert refused.value.code == "expiry_approval_not_allowed"
    with pytest.raises(InvalidInput):  # no risk matches every risk, low included
        await create_rule(
            workspace.id, policy=APPROVE, risk=None, agent_id=None, card_type=None,
            created_by=by, now=now,
        )  # fmt: skip
    await create_rule(
        workspace.id, policy=APPROVE, risk="high", agent_id=None, card_type=None,
        created_by=by, now=now,
    )  # fmt: skip
    with pytest.raises(Conflict) as blocked:
        await update_approve_on_expiry(workspace.id, [], by=by, now=now)
    assert blocked.value.code == "rule_approves_on_expiry"
    assert await approve_on_expiry(workspace.id) == ["high"]
    with pytest.raises(InvalidInput):
        await update_approve_on_expiry(workspace.id, ["severe"], by=by, now=now)
