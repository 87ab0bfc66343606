"""Quorum votes: each approver's answer to a quorum card, and the decision they add up to.

A person's answer to a card whose policy is a quorum is an ``interaction.voted`` event, not
a resolution. ``record_vote`` runs inside that event's append (under the workspace's lock,
like every projection handler), so two votes arriving together are counted one after the
other and each voter votes once. The card resolves when ``decision`` says the votes are
enough: ``required`` approvals, or one rejection (the first rejection wins: a careful team
stops at the first no). That resolution is its own ``interaction.resolved`` event by
``hub:policy``, whose handler recomputes the decision from the stored votes, so nobody can
resolve a quorum card around its votes.
"""

from __future__ import annotations

from typing import Any

from hub.core.approvals.policies import card_of, policy_of
from hub.core.errors import Conflict, refused_answer
from hub.core.store.models import Event, Interaction
from hub.protocol.clock import iso
from hub.protocol.interactions import ResponseError, validate_response

Connection = Any


async def record_vote(event: Event, interaction: Interaction, connection: Connection) -> None:
    """Add the event's vote to ``interaction`` (locked, pending, a quorum card)."""
    payload = event.payload
    voter = str(payload.get("respondedBy") or "")
    votes = list(interaction.votes or [])
    earlier = next((v for v in votes if v.get("actor") == voter), None)
    if earlier is not None:
        raise Conflict(
            f"You already voted ({earlier.get('optionId')}) at {earlier.get('at')}.",
            code="already_voted",
            hint="Each approver votes once; the card shows the votes so far.",
            vote=earlier,
        )
    try:
        response = validate_response(card_of(interaction), payload.get("response") or {})
    except ResponseError as error:
        raise refused_answer(str(error), error.code) from None
    vote = {
        "actor": voter,
        **response,
        "via": str(payload.get("via") or ""),
        "at": iso(event.recorded_at),
    }
    event.payload = {**payload, "response": response}
    interaction.votes = [*votes, vote]
    if decision(interaction) is not None:
        # Resolve at once (the caller does); should that be lost, the clock finds it due.
        interaction.policy_due_at = event.recorded_at
    await interaction.save(using_db=connection, update_fields=["votes", "policy_due_at"])


def decision(interaction: Interaction) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The answer the votes decide and the vote that decided it; None while they do not."""
    policy = policy_of(interaction)
    if policy is None or policy.mode != "quorum":
        return None
    approving = card_of(interaction).approving_option().id
    for count, vote in enumerate(interaction.votes or [], start=1):
        if vote.get("optionId") != approving or count >= policy.required:
            # The first rejection decides; so do ``required`` approvals before any.
            return _answer(vote, interaction), vote
    return None


def _answer(deciding: dict[str, Any], interaction: Interaction) -> dict[str, Any]:
    answer = {k: v for k, v in deciding.items() if k not in ("actor", "via", "at", "comment")}
    if deciding.get("comment"):
        answer["comment"] = deciding["comment"]
    answer["votes"] = list(interaction.votes or [])
    return answer


__all__ = ["decision", "record_vote"]
