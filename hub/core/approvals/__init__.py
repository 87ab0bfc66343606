"""How a card is decided: approval policies and their clock (reminders, escalation, expiry),
quorum votes, the workspace's policy rules, and who may answer.
"""

from __future__ import annotations

from hub.core.approvals.permissions import (
    ANSWERING_ROLES,
    NotAllowedToAnswer,
    ensure_may_answer,
    ensure_owner,
    may_answer,
)
from hub.core.approvals.policies import PolicyStatus, is_quorum, policy_status
from hub.core.approvals.policy_clock import PolicyClock, resolve_if_decided
from hub.core.approvals.rules import create_rule, delete_rule, list_rules, rule_view

__all__ = [
    "ANSWERING_ROLES",
    "NotAllowedToAnswer",
    "PolicyClock",
    "PolicyStatus",
    "create_rule",
    "delete_rule",
    "ensure_may_answer",
    "ensure_owner",
    "is_quorum",
    "list_rules",
    "may_answer",
    "policy_status",
    "resolve_if_decided",
    "rule_view",
]
