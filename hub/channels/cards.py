"""The Card and Notice view-models: what every surface renders, built once, in one place.

A ``Card`` is an interaction as a person should see it (spec §7.3: why you are needed →
impact → what you can do → details), with its current state and, once decided, the outcome
("approved by Ada via Telegram at 10:02"). Channels render a Card; they never read the
Interaction row themselves, so every surface shows the same words for the same state.

A ``Notice`` is the same for task events that only inform ("the task failed").

Neither ever carries the text a person typed into a sensitive input (spec §11): a Card's
``answer_text`` is ``None`` for those and ``answer_hidden`` is set instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hub.channels.action_view import ActionView, action_view
from hub.core.approvals.policies import PolicyStatus, policy_status
from hub.core.store.models import Agent, Interaction, Task
from hub.core.work.interactions import display_names
from hub.core.work.views import effective_interaction_status
from hub.protocol.actions import ProposedAction
from hub.protocol.interactions import InputSpec, InteractionCard, InteractionType, Risk


@dataclass(frozen=True, slots=True)
class CardOption:
    id: str
    label: str
    description: str | None = None
    style: str | None = None
    recommended: bool = False


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    workspace_id: str
    type: InteractionType
    title: str
    why: str
    impact: str
    risk: Risk | None
    options: tuple[CardOption, ...]
    multiple: bool
    min_selections: int
    max_selections: int
    input: InputSpec | None
    content: str | None
    content_url: str | None
    details: dict[str, Any]
    status: str  # pending, resolved, expired, cancelled
    task_id: str | None = None
    task_title: str | None = None
    agent_name: str | None = None
    expires_at: datetime | None = None
    created_at: datetime | None = None
    response: dict[str, Any] | None = None
    responded_by: str | None = None
    responded_by_name: str | None = None
    via: str | None = None
    responded_at: datetime | None = None
    chosen: tuple[CardOption, ...] = field(default_factory=tuple)
    answer_text: str | None = None
    answer_hidden: bool = False
    comment: str | None = None
    proposed_action: ProposedAction | None = None
    # Why the agent withdrew the card ("answered_in_terminal", "no_longer_needed") and its
    # note, plain text; None for a card cancelled because its task ended.
    withdrawal_reason: str | None = None
    withdrawal_note: str = ""

    @property
    def action(self) -> ActionView | None:
        """The exact action: as decided once answered, as proposed until then."""
        return action_view(self.proposed_action, self.status, self.response)

    @property
    def action_hash(self) -> str | None:
        """The hash of the action as proposed: what a message shows and an answer binds to."""
        return self.proposed_action.hash if self.proposed_action else None

    policy: PolicyStatus | None = None
    people: dict[str, str] = field(default_factory=dict)  # user id → display name

    @property
    def is_pending(self) -> bool:
        return self.status == "pending"

    @property
    def is_high_risk(self) -> bool:
        return self.risk is Risk.HIGH

    @property
    def takes_text(self) -> bool:
        return self.type is InteractionType.INPUT

    def option(self, option_id: str) -> CardOption | None:
        return next((o for o in self.options if o.id == option_id), None)

    def option_index(self, option_id: str) -> int:
        return next(i for i, o in enumerate(self.options) if o.id == option_id)


def _chosen(card: InteractionCard, response: dict[str, Any] | None) -> tuple[CardOption, ...]:
    if not response:
        return ()
    ids = response.get("optionIds") or ([response["optionId"]] if "optionId" in response else [])
    return tuple(_option(o) for o in card.options if o.id in ids)


def _option(option: Any) -> CardOption:
    return CardOption(
        id=option.id,
        label=option.label,
        description=option.description,
        style=option.style,
        recommended=option.recommended,
    )


async def build_card(interaction: Interaction) -> Card:
    """The Card of ``interaction`` as it stands now."""
    card = InteractionCard.model_validate(interaction.payload)
    task = await Task.filter(id=interaction.task_id).first() if interaction.task_id else None
    agent = await Agent.filter(id=interaction.agent_id).first() if interaction.agent_id else None
    policy = policy_status(interaction)
    people = {f"user:{u}" for u in policy.people} if policy else set()
    if interaction.responded_by:
        people.add(interaction.responded_by)
    names = await display_names(people)
    response = interaction.response
    sensitive = bool(card.input and card.input.sensitive)
    text = response.get("text") if response else None
    return Card(
        id=interaction.id,
        workspace_id=interaction.workspace_id,
        type=card.type,
        title=card.title,
        why=card.description,
        impact=card.impact,
        risk=card.risk,
        options=tuple(_option(o) for o in card.options),
        multiple=card.multiple,
        min_selections=card.min_selections,
        max_selections=card.max_selections or len(card.options),
        input=card.input,
        content=card.content,
        content_url=card.content_url,
        details=dict(card.details),
        status=effective_interaction_status(interaction),
        task_id=interaction.task_id,
        task_title=task.title if task else None,
        agent_name=agent.name if agent else None,
        expires_at=interaction.expires_at,
        created_at=interaction.created_at,
        # The raw answer goes no further than here when it is sensitive.
        response=None if sensitive else response,
        responded_by=interaction.responded_by,
        responded_by_name=names.get(interaction.responded_by or ""),
        via=interaction.responded_via,
        responded_at=interaction.responded_at,
        chosen=_chosen(card, response),
        answer_text=None if sensitive else text,
        answer_hidden=sensitive and text is not None,
        comment=(response or {}).get("comment"),
        proposed_action=card.action,
        withdrawal_reason=(interaction.withdrawal or {}).get("reason"),
        withdrawal_note=str((interaction.withdrawal or {}).get("note") or ""),
        policy=policy,
        people={actor.partition(":")[2]: name for actor, name in names.items()},
    )


async def load_card(workspace_id: str, interaction_id: str) -> Card | None:
    interaction = await Interaction.filter(id=interaction_id, workspace_id=workspace_id).first()
    return await build_card(interaction) if interaction else None


@dataclass(frozen=True, slots=True)
class Notice:
    """A task event worth telling a person about (today: the task failed)."""

    kind: str  # "failed"
    workspace_id: str
    task_id: str
    task_title: str
    status: str
    error: str
    summary: str
    agent_name: str | None


async def load_notice(kind: str, workspace_id: str, task_id: str) -> Notice | None:
    task = await Task.filter(id=task_id, workspace_id=workspace_id).first()
    if task is None:
        return None
    agent = await Agent.filter(id=task.target_agent_id).first() if task.target_agent_id else None
    return Notice(
        kind=kind,
        workspace_id=workspace_id,
        task_id=task.id,
        task_title=task.title,
        status=task.status,
        error=task.error,
        summary=task.summary,
        agent_name=agent.name if agent else None,
    )


__all__ = ["Card", "CardOption", "Notice", "build_card", "load_card", "load_notice"]
