"""Approval policies: which one a card gets, who may answer it, and when its clock is due.

A card's policy is the first workspace rule (``PolicyRule``) that matches the card's risk,
agent and type or, when none does, the agent's own (``InteractionCard.policy``). It is
chosen once, while ``interaction.requested`` is applied, and written into that event with
the approvers named by user id, so every surface shows the same policy and replaying the log
gives the same card even after the rules changed (``policySource`` says where it came
from: ``rule:<id>``, ``agent`` or ``none``).

The policy's steps over time (reminder, escalation, expiry) are run by
``hub.core.approvals.policy_clock``; the quorum's votes are counted by ``hub.core.approvals.votes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hub.core.approvals.expiry_approval import ensure_expiry_may_approve
from hub.core.errors import Conflict, Forbidden, InvalidInput
from hub.core.store.models import Event, Interaction, InteractionStatus, Membership, Role, User
from hub.core.store.policy_models import PolicyRule
from hub.protocol.interactions import ApprovalPolicy, InteractionCard, InteractionType

Connection = Any
POLICY_ACTOR = "hub:policy"  # the actor of every step the policy takes by itself
POLICY_VIA = "policy"


# --- choosing a card's policy ----------------------------------------------------------


async def choose_policy(
    event: Event, card: InteractionCard, agent_id: str | None, connection: Connection
) -> ApprovalPolicy | None:
    """The policy ``card`` gets, approvers as user ids; notes its source in the event.

    A matching workspace rule wins over the agent's own policy: the rule is the people's
    decision, the card is the agent's word. Raises ``InvalidInput`` (``unknown_approver``)
    when the policy names someone who is not a member of the workspace allowed to answer:
    a card nobody named could approve would wait for nothing, and ``InvalidInput``
    (``expiry_approval_not_allowed``) when its expiry would approve a card of a risk the
    workspace keeps for people (``hub.core.approvals.expiry_approval``).
    """
    if event.pk_id is not None:  # a stored event, replayed: its policy was chosen then
        return card.policy
    rule = await matching_rule(event.workspace_id, card, agent_id, connection)
    if rule is not None:
        policy, source = ApprovalPolicy.model_validate(rule.policy), f"rule:{rule.id}"
    elif card.policy is not None:
        policy, source = card.policy, "agent"
    else:
        event.payload = {**event.payload, "policySource": "none"}
        return None
    await ensure_expiry_may_approve(event.workspace_id, policy, card.risk, connection)
    policy = policy.model_copy(
        update={
            "approvers": await member_ids(event.workspace_id, policy.approvers, connection),
            "escalate_to": await member_ids(event.workspace_id, policy.escalate_to, connection),
        }
    )
    event.payload = {**event.payload, "policySource": source}
    return policy


async def matching_rule(
    workspace_id: str, card: InteractionCard, agent_id: str | None, connection: Connection
) -> PolicyRule | None:
    rules = (
        await PolicyRule.filter(workspace_id=workspace_id)
        .using_db(connection)
        .order_by("position", "created_at")
    )
    for rule in rules:
        if rule.risk and (card.risk is None or rule.risk != card.risk.value):
            continue
        if rule.agent_id and rule.agent_id != agent_id:
            continue
        if rule.card_type and rule.card_type != card.type.value:
            continue
        return rule
    return None


async def member_ids(workspace_id: str, names: list[str], connection: Connection) -> list[str]:
    """User ids of the members named by email or id, in the order given."""
    if not names:
        return []
    emails = [n.strip().lower() for n in names if "@" in n]
    users = await User.filter(email__in=emails).using_db(connection).values_list("id", "email")
    by_email = {str(email).lower(): str(user_id) for user_id, email in users}
    answering = {
        str(user_id)
        for user_id in await Membership.filter(
            workspace_id=workspace_id, role__in=[Role.OWNER, Role.MEMBER]
        )
        .using_db(connection)
        .values_list("user_id", flat=True)
    }
    ids: list[str] = []
    for name in names:
        user_id = by_email.get(name.strip().lower()) if "@" in name else name
        if user_id is None or user_id not in answering:
            raise InvalidInput(
                f"The approval policy names {name!r}, who cannot answer in this workspace.",
                code="unknown_approver",
                hint="Name members of the workspace (not viewers) by email or user id.",
            )
        if user_id not in ids:
            ids.append(user_id)
    return ids


def policy_of(interaction: Interaction) -> ApprovalPolicy | None:
    return ApprovalPolicy.model_validate(interaction.policy) if interaction.policy else None


def card_of(interaction: Interaction) -> InteractionCard:
    return InteractionCard.model_validate(interaction.payload)


def is_quorum(interaction: Interaction) -> bool:
    return bool(interaction.policy) and (interaction.policy or {}).get("mode") == "quorum"


# --- who may answer --------------------------------------------------------------------


async def ensure_named_approver(interaction: Interaction, responder: str) -> None:
    """Refuse ``responder`` when the card's policy names its approvers and not them."""
    policy = policy_of(interaction)
    if policy is None or not policy.approvers:
        return
    kind, _, user_id = responder.partition(":")
    if kind == "user" and user_id in policy.approvers:
        return
    names = await User.filter(id__in=policy.approvers).values_list("display_name", flat=True)
    raise Forbidden(
        "This card needs an answer from the people its approval policy names: "
        + ", ".join(str(n) for n in names)
        + ".",
        code="not_an_approver",
        hint="Ask one of them to answer it; a workspace owner can change the policy rules.",
    )


# --- what every surface shows --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PolicyStatus:
    """A card's policy and its votes so far, as every surface shows them.

    People are user ids; each surface puts names on them. ``expiry`` is what expiry
    decides (deny, approve or expire), the default already applied.
    """

    mode: str
    required: int
    approvers: tuple[str, ...]
    approvals: int
    votes: tuple[dict[str, Any], ...]
    remind_after_s: int | None
    escalate_after_s: int | None
    escalate_to: tuple[str, ...]
    escalated: bool
    expiry: str

    @property
    def is_quorum(self) -> bool:
        return self.mode == "quorum"

    def vote_of(self, user_id: str) -> dict[str, Any] | None:
        return next((v for v in self.votes if v.get("actor") == f"user:{user_id}"), None)

    @property
    def people(self) -> set[str]:
        voters = {str(v.get("actor", "")).partition(":")[2] for v in self.votes}
        return {*self.approvers, *self.escalate_to, *voters}


def policy_status(interaction: Interaction) -> PolicyStatus | None:
    policy = policy_of(interaction)
    if policy is None:
        return None
    card = card_of(interaction)
    approving = card.approving_option().id if card.options else None
    votes = tuple(interaction.votes or [])
    expiry = policy.expiry_outcome(card.risk)
    if card.type not in (InteractionType.APPROVAL, InteractionType.REVIEW):
        expiry = "expire"
    return PolicyStatus(
        mode=policy.mode,
        required=policy.required,
        approvers=tuple(policy.approvers),
        approvals=sum(1 for v in votes if v.get("optionId") == approving),
        votes=votes,
        remind_after_s=policy.remind_after_s,
        escalate_after_s=policy.escalate_after_s,
        escalate_to=tuple(policy.escalate_to),
        escalated=interaction.escalated_at is not None,
        expiry=expiry,
    )


# --- the clock's schedule --------------------------------------------------------------


def policy_due_at(interaction: Interaction) -> datetime | None:
    """When the policy clock must next look at ``interaction``; None when never again."""
    if interaction.status != InteractionStatus.PENDING:
        return None
    policy = policy_of(interaction)
    moments: list[datetime] = []
    if interaction.expires_at is not None:
        moments.append(interaction.expires_at)
    if policy is not None:
        start = interaction.created_at
        if policy.remind_after_s and interaction.reminded_at is None:
            remind = start + timedelta(seconds=policy.remind_after_s)
            # A reminder is worth sending only before the card expires.
            if interaction.expires_at is None or remind < interaction.expires_at:
                moments.append(remind)
        if policy.escalate_after_s and interaction.escalated_at is None:
            moments.append(start + timedelta(seconds=policy.escalate_after_s))
    return min(moments) if moments else None


def waiting_for(interaction: Interaction) -> list[str] | None:
    """Named approvers who have not voted yet; None when the policy names nobody."""
    policy = policy_of(interaction)
    if policy is None or not policy.approvers:
        return None
    voted = {str(v.get("actor", "")).partition(":")[2] for v in interaction.votes or []}
    return [a for a in policy.approvers if a not in voted]


# --- the policy's steps, applied under the workspace's lock ------------------------------


async def record_reminder(event: Event, interaction: Interaction, connection: Connection) -> None:
    if interaction.reminded_at is not None:
        raise Conflict(f"Interaction {interaction.id} was reminded already.", code="reminded")
    interaction.reminded_at = event.recorded_at
    interaction.policy_due_at = policy_due_at(interaction)
    await interaction.save(using_db=connection, update_fields=["reminded_at", "policy_due_at"])


async def record_escalation(event: Event, interaction: Interaction, connection: Connection) -> None:
    """Add the fallback approvers; with nobody named, anyone allowed could answer already,
    and the escalation only makes sure the fallback people hear of it."""
    policy = policy_of(interaction)
    if policy is None or not policy.escalate_to:
        raise Conflict(
            f"Interaction {interaction.id} has nobody to escalate to.", code="no_escalation"
        )
    if interaction.escalated_at is not None:
        raise Conflict(f"Interaction {interaction.id} was escalated already.", code="escalated")
    if policy.approvers:
        added = [a for a in policy.escalate_to if a not in policy.approvers]
        policy = policy.model_copy(update={"approvers": [*policy.approvers, *added]})
        interaction.policy = policy.wire()
    event.payload = {**event.payload, "escalateTo": list(policy.escalate_to)}
    interaction.escalated_at = event.recorded_at
    interaction.policy_due_at = policy_due_at(interaction)
    await interaction.save(
        using_db=connection, update_fields=["policy", "escalated_at", "policy_due_at"]
    )


__all__ = [
    "POLICY_ACTOR",
    "POLICY_VIA",
    "PolicyStatus",
    "choose_policy",
    "ensure_named_approver",
    "is_quorum",
    "matching_rule",
    "member_ids",
    "policy_due_at",
    "policy_of",
    "policy_status",
    "waiting_for",
]
