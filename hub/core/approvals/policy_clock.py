"""The policy clock: what an approval policy does while nobody answers.

For each pending card it is due for (``Interaction.policy_due_at``, kept by the projection),
``PolicyClock`` takes the policy's next step as an event by ``hub:policy``:

* ``interaction.reminded``: the approvers who have not answered are reminded, on a surface
  the card did not reach yet (the notification outbox picks it);
* ``interaction.escalated``: the fallback approvers are added and told;
* at ``expiresAt``, the expiry default: ``interaction.resolved`` (deny or approve, ``via``
  ``policy``, ``reason`` ``expired``) — the agent hears the decision like any other — or
  ``interaction.expired`` when nothing is to be decided. A high-risk card with no explicit
  choice is denied: waiting forever is not safe, approving by silence even less so.

Once across processes. A clock claims due cards by pushing their due time forward (a
lease) in a short transaction that reads with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, as
the outbox does, so two hub processes do not work on one card at once; each step's event
has a deterministic envelope id (``policy:<card>:<step>``), so a step repeated after a crash
is a duplicate and changes nothing.

Time is the clock's ``now`` callable, so tests move it instead of waiting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from hub.core.approvals import votes
from hub.core.approvals.policies import (
    POLICY_ACTOR,
    POLICY_VIA,
    card_of,
    policy_due_at,
    policy_of,
    waiting_for,
)
from hub.core.errors import HubError
from hub.core.log.bus import DEFAULT_BUS, PublishedEvent
from hub.core.log.events import append_event
from hub.core.store.claims import claim
from hub.core.store.models import Interaction, InteractionStatus, Membership, Role
from hub.core.workers import OnDemand
from hub.protocol.clock import utcnow
from hub.protocol.interactions import InteractionType, Risk

logger = logging.getLogger(__name__)


async def resolve_if_decided(workspace_id: str, interaction_id: str) -> bool:
    """Resolve a quorum card whose votes decide it; True if it is resolved now."""
    interaction = await Interaction.filter(id=interaction_id, workspace_id=workspace_id).first()
    if interaction is None or interaction.status != InteractionStatus.PENDING:
        return False
    if votes.decision(interaction) is None:
        return False
    await _step(interaction, "interaction.resolved", "resolve", {"response": {}})
    return True


async def _step(
    interaction: Interaction, event_type: str, step: str, payload: dict[str, object]
) -> None:
    await append_event(
        interaction.workspace_id,
        event_type,
        {
            "interactionId": interaction.id,
            "respondedBy": POLICY_ACTOR,
            "via": POLICY_VIA,
            **payload,
        },
        actor=POLICY_ACTOR,
        task_id=interaction.task_id,
        conversation_id=interaction.conversation_id,
        envelope_id=f"policy:{interaction.id}:{step}",
    )


def expiry_outcome(interaction: Interaction) -> str:
    """deny, approve or expire: what the card's expiry decides."""
    card = card_of(interaction)
    policy = policy_of(interaction)
    if policy is not None:
        outcome = policy.expiry_outcome(card.risk)
    else:
        outcome = "deny" if card.risk is Risk.HIGH else "expire"
    decidable = card.type in (InteractionType.APPROVAL, InteractionType.REVIEW)
    return outcome if decidable else "expire"


async def take_due_step(interaction: Interaction, now: datetime) -> None:
    """Take every step of ``interaction``'s policy that is due at ``now``, in order."""
    if await resolve_if_decided(interaction.workspace_id, interaction.id):
        return
    policy = policy_of(interaction)
    start = interaction.created_at
    expired = interaction.expires_at is not None and interaction.expires_at <= now
    if policy is not None and not expired:
        if (
            policy.remind_after_s
            and interaction.reminded_at is None
            and start + timedelta(seconds=policy.remind_after_s) <= now
        ):
            await _step(
                interaction,
                "interaction.reminded",
                "remind",
                {"to": await _still_to_answer(interaction)},
            )
        if (
            policy.escalate_after_s
            and interaction.escalated_at is None
            and start + timedelta(seconds=policy.escalate_after_s) <= now
        ):
            await _step(
                interaction,
                "interaction.escalated",
                "escalate",
                {"escalateTo": list(policy.escalate_to)},
            )
    if expired:
        outcome = expiry_outcome(interaction)
        if outcome == "expire":
            await _step(interaction, "interaction.expired", "expire", {"reason": "expired"})
        else:
            card = card_of(interaction)
            option = card.denying_option() if outcome == "deny" else card.approving_option()
            await _step(
                interaction,
                "interaction.resolved",
                "expire",
                {"response": {"optionId": option.id}, "reason": "expired", "outcome": outcome},
            )


async def _still_to_answer(interaction: Interaction) -> list[str]:
    """User ids who may answer and have not: the named approvers, else the members."""
    named = waiting_for(interaction)
    if named is not None:
        return named
    voted = {str(v.get("actor", "")).partition(":")[2] for v in interaction.votes or []}
    members = await Membership.filter(
        workspace_id=interaction.workspace_id, role__in=[Role.OWNER, Role.MEMBER]
    ).values_list("user_id", flat=True)
    return [str(m) for m in members if str(m) not in voted]


class PolicyClock:
    def __init__(
        self,
        *,
        now: Callable[[], datetime] = utcnow,
        idle_poll_s: float = 5.0,
        lease_s: float = 60.0,
        batch_size: int = 100,
    ) -> None:
        self.now = now
        self.idle_poll_s = idle_poll_s
        self.lease_s = lease_s
        self.batch_size = batch_size
        self._worker = OnDemand(
            "policy-clock", self.run_once, self._idle_timeout, retry_s=idle_poll_s
        )

    def _on_event(self, event: PublishedEvent) -> None:
        if event.type.startswith("interaction."):
            self._worker.wake()  # a new card or a vote may be due sooner than we planned

    @property
    def running(self) -> bool:
        return self._worker.running

    def start(self) -> None:
        DEFAULT_BUS.add_listener(self._on_event)
        self._worker.start()

    async def stop(self) -> None:
        DEFAULT_BUS.remove_listener(self._on_event)
        await self._worker.stop()

    async def _idle_timeout(self) -> float:
        upcoming = (
            await Interaction.filter(
                status=InteractionStatus.PENDING, policy_due_at__not_isnull=True
            )
            .order_by("policy_due_at")
            .first()
            .values_list("policy_due_at", flat=True)
        )
        if not isinstance(upcoming, datetime):
            return self.idle_poll_s
        return min(self.idle_poll_s, max(0.01, (upcoming - self.now()).total_seconds()))

    async def run_once(self) -> int:
        """Take the due steps of one batch of cards; returns how many cards were due."""
        now = self.now()
        claimed = await self._claim(now)
        for interaction in claimed:
            try:
                await take_due_step(interaction, now)
            except HubError as error:  # e.g. answered meanwhile: nothing left to do
                logger.info("policy step on %s not taken: %s", interaction.id, error.message)
            except Exception:
                logger.exception("policy step on %s failed; retried later", interaction.id)
                continue
            await self._reschedule(interaction.id, now)
        return len(claimed)

    async def _reschedule(self, interaction_id: str, now: datetime) -> None:
        fresh = await Interaction.filter(id=interaction_id).first()
        if fresh is None:
            return
        due = policy_due_at(fresh)
        if due is not None and due <= now:
            due = now + timedelta(seconds=self.lease_s)  # a step that could not be taken
        # Only if no event rescheduled it meanwhile (a decisive vote makes it due at once).
        await Interaction.filter(id=fresh.id, policy_due_at=fresh.policy_due_at).update(
            policy_due_at=due
        )

    async def _claim(self, now: datetime) -> list[Interaction]:
        due = Interaction.filter(status=InteractionStatus.PENDING, policy_due_at__lte=now)
        return await claim(
            due,
            order=("policy_due_at", "id"),
            limit=self.batch_size,
            lease={"policy_due_at": now + timedelta(seconds=self.lease_s)},
        )


__all__ = ["PolicyClock", "expiry_outcome", "resolve_if_decided", "take_due_step"]
