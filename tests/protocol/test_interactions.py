"""The approval card built from an adapter's keywords: every one reaches the card."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hub.protocol.actions import ProposedAction
from hub.protocol.interactions import (
    ApprovalFields,
    ApprovalPolicy,
    InteractionType,
    Option,
    Risk,
    approval_card,
)


def test_every_approval_field_reaches_the_card() -> None:
    action = ProposedAction(kind="deploy", fields={"service": "api"})
    policy = ApprovalPolicy(mode="quorum", required=2)
    options = [Option(id="approve", label="Ship it"), Option(id="reject", label="Hold")]
    expires = datetime(2030, 1, 1, tzinfo=UTC)
    fields: ApprovalFields = {
        "description": "why",
        "impact": "what changes",
        "risk": "high",
        "options": options,
        "details": {"build": 7},
        "expires_at": expires,
        "action": action,
        "policy": policy,
    }
    assert set(fields) == set(ApprovalFields.__annotations__)  # this test covers them all
    card = approval_card("Deploy?", **fields)
    assert card.type is InteractionType.APPROVAL and card.title == "Deploy?"
    assert (card.description, card.impact, card.risk) == ("why", "what changes", Risk.HIGH)
    assert card.options == options and card.details == {"build": 7}
    assert card.expires_at == expires and card.action == action and card.policy == policy


def test_an_approval_card_needs_only_a_title() -> None:
    card = approval_card("Go on?")
    assert card.risk is None and card.description == "" and card.details == {}
    assert [o.id for o in card.options] == ["approve", "reject"]


def test_a_mistyped_keyword_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError, match="descripton"):
        approval_card("Go on?", descripton="why")  # type: ignore[call-arg]
