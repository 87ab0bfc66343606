"""Workspace approval-policy rules: an entity the workspace's owners edit, not a projection.

A rule matches cards by risk, agent and card type (each optional; an empty one matches
everything) and gives the policy such a card gets when its agent sent none. Rules are
tried in ``position`` order and the first match applies. The policy chosen is copied into
the ``interaction.requested`` event, so editing a rule later never changes a card already
asked, and replaying the log gives the same cards.

``ApprovalSettings`` holds the workspace's limits on any policy, a rule's or an agent's:
on which risks a card's expiry may approve it. ``CodingAgentRules`` holds the calls its
coding agents may never make, whoever would approve them.
"""

from __future__ import annotations

from typing import Any

from tortoise import fields
from tortoise.models import Model


class PolicyRule(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.Workspace", related_name="policy_rules", on_delete=fields.CASCADE
    )
    workspace_id: str
    position = fields.IntField(default=0)
    risk = fields.CharField(max_length=20, null=True)
    agent_id = fields.CharField(max_length=40, null=True)
    card_type = fields.CharField(max_length=20, null=True)
    policy: dict[str, Any] = fields.JSONField(default=dict)  # an ApprovalPolicy, on the wire
    created_by = fields.CharField(max_length=100)
    created_at = fields.DatetimeField()

    class Meta:
        table = "policy_rule"
        indexes = (("workspace_id", "position"),)


class ApprovalSettings(Model):
    """Limits on what the policies of a workspace may decide by themselves.

    No row means the defaults (``hub.core.approvals.expiry_approval``)."""

    id = fields.IntField(primary_key=True)
    workspace: fields.OneToOneRelation[Any] = fields.OneToOneField(
        "models.Workspace", related_name="approval_settings", on_delete=fields.CASCADE
    )
    workspace_id: str
    # The risks ("low", "medium", "high") on which a card's expiry may approve it.
    approve_on_expiry: list[str] = fields.JSONField(default=list)
    updated_by = fields.CharField(max_length=100)
    updated_at = fields.DatetimeField()

    class Meta:
        table = "approval_settings"


class CodingAgentRules(Model):
    """The tool calls the workspace's coding agents may never make, whoever would approve.

    Rules in Claude Code's syntax (``Bash(git push --force:*)``), for Claude Code and Codex.

    No row means no rules. Matched by the coding agents' hook gateway on every call the
    agent is about to make (``plugins.coding_agents``)."""

    id = fields.IntField(primary_key=True)
    workspace: fields.OneToOneRelation[Any] = fields.OneToOneField(
        "models.Workspace", related_name="coding_agent_rules", on_delete=fields.CASCADE
    )
    workspace_id: str
    deny: list[str] = fields.JSONField(default=list)
    updated_by = fields.CharField(max_length=100)
    updated_at = fields.DatetimeField()

    class Meta:
        table = "coding_agent_rules"
