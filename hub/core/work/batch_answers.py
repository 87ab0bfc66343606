"""Several pending cards of one task answered together: all at once, or item by item.

A batch is not a decision of its own. Every item goes through ``respond_to_interaction``,
so each answer is checked, permitted and recorded exactly as if it had been given alone,
and each reaches the agent as its own ``interaction.resolved``. What the batch adds is
that the answers are checked together first and carry one ``batchId``, which the audit
trail shows.

The rules a careful person expects:

* A batch that names something it cannot decide — an unknown card, a card of another task,
  an answer the card does not offer — is refused whole (``invalid_batch``, naming each
  item and why) and decides nothing: it is a mistake to fix, not a partial success.
* A card someone else decided first is not a mistake: that item is reported ("already
  decided by Ada via Telegram") and the rest still apply.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from hub.core.errors import AlreadyDecided, Forbidden, Gone, InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.store.models import Interaction, InteractionStatus, Task
from hub.core.work.interactions import respond_to_interaction, responder_names
from hub.core.work.views import interaction_view
from hub.protocol.interactions import (
    InteractionCard,
    InteractionType,
    ResponseError,
    validate_response,
)

MAX_BATCH_ITEMS = 50
# The options "approve all" and "reject all" pick on each card.
APPROVE = "approve"
REJECT = "reject"


class Outcome(StrEnum):
    DECIDED = "decided"
    ALREADY_DECIDED = "already_decided"  # someone answered first; the item says who, how
    CLOSED = "closed"  # expired, withdrawn by its agent or with its task, before the batch
    REFUSED = "refused"  # the answer was not taken (say, not this person's card to answer)


@dataclass(frozen=True, slots=True)
class BatchItem:
    interaction_id: str
    response: dict[str, Any]


def batchable(card: InteractionCard) -> bool:
    """Whether "approve all" / "reject all" can answer ``card``: an approval card that
    offers both. Other cards are still answered one by one, or item by item in a batch."""
    return (
        card.type is InteractionType.APPROVAL
        and card.option(APPROVE) is not None
        and card.option(REJECT) is not None
    )


def answer_for(
    card: InteractionCard, option_id: str, shown_action_hash: str | None = None
) -> dict[str, Any]:
    """The answer to ``card`` that picks ``option_id``, built from the card as shown.

    Every surface builds a batch item here, one card at a time, so an answer stays bound
    to the card it was given on: when the card proposes an action, the answer carries the
    hash of the action that surface showed (``shown_action_hash``), and the core refuses
    it (``action_changed``) if the card's action is no longer that one."""
    answer: dict[str, Any] = {"optionId": option_id}
    if card.action is not None:
        answer["actionHash"] = shown_action_hash or ""
    return answer


def batchable_cards(interactions: list[Interaction]) -> list[Interaction]:
    """The pending interactions that "approve all" / "reject all" can answer, in order."""
    found = []
    for interaction in interactions:
        if interaction.status != InteractionStatus.PENDING:
            continue
        try:
            card = InteractionCard.model_validate(interaction.payload)
        except ValidationError:
            continue
        if batchable(card):
            found.append(interaction)
    return found


async def respond_to_batch(
    workspace_id: str,
    task_id: str,
    items: list[BatchItem],
    *,
    responder: str,
    via: str,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Answer several cards of task ``task_id`` together; ``{batchId, items: [outcome]}``.

    Each outcome is ``{interactionId, outcome, interaction}`` plus, when the item was not
    decided by this batch, a ``message`` (and ``code``) saying why: ``already_decided``
    (with ``respondedBy``, ``respondedByName``, ``via``, ``respondedAt``), ``closed``
    (expired or withdrawn) or ``refused`` (not this person's to answer).

    Raises ``NotFound`` for a task not in the workspace and ``InvalidInput``
    (``invalid_batch``, ``details.items`` naming each problem) before deciding anything.
    """
    if not await Task.filter(id=task_id, workspace_id=workspace_id).exists():
        raise NotFound(f"Task {task_id} does not exist in this workspace.", code="task_not_found")
    if not 1 <= len(items) <= MAX_BATCH_ITEMS:
        raise _invalid(f"A batch holds 1 to {MAX_BATCH_ITEMS} items.", [])
    await _check_all(workspace_id, task_id, items)
    batch_id = _batch_id(idempotency_key, responder, task_id)
    outcomes = []
    for item in items:
        outcomes.append(
            await _respond_to_item(
                workspace_id,
                item,
                responder=responder,
                via=via,
                batch_id=batch_id,
                idempotency_key=idempotency_key,
            )
        )
    return {"batchId": batch_id, "taskId": task_id, "items": outcomes}


async def _check_all(workspace_id: str, task_id: str, items: list[BatchItem]) -> None:
    ids = [item.interaction_id for item in items]
    found = {i.id: i for i in await Interaction.filter(workspace_id=workspace_id, id__in=ids).all()}
    problems, seen = [], set()
    for position, item in enumerate(items):
        interaction = found.get(item.interaction_id)
        problem = None
        if item.interaction_id in seen:
            problem = "This card is named twice; answer it once."
        elif interaction is None:
            problem = "No such card in this workspace."
        elif interaction.task_id != task_id:
            problem = "This card belongs to another task."
        elif interaction.status == InteractionStatus.PENDING:
            problem = _answer_problem(interaction, item.response)
        seen.add(item.interaction_id)
        if problem is not None:
            problems.append(
                {"index": position, "interactionId": item.interaction_id, "problem": problem}
            )
    if problems:
        raise _invalid(
            f"{len(problems)} of the {len(items)} items cannot be decided; nothing was decided.",
            problems,
        )


def _answer_problem(interaction: Interaction, response: dict[str, Any]) -> str | None:
    try:
        validate_response(InteractionCard.model_validate(interaction.payload), response)
    except ValidationError:
        return "This card cannot be answered: it is not a valid card."
    except ResponseError as error:
        return str(error)
    return None


async def _respond_to_item(
    workspace_id: str,
    item: BatchItem,
    *,
    responder: str,
    via: str,
    batch_id: str,
    idempotency_key: str | None,
) -> dict[str, Any]:
    outcome: dict[str, Any] = {"interactionId": item.interaction_id}
    try:
        await respond_to_interaction(
            workspace_id,
            item.interaction_id,
            item.response,
            responder=responder,
            via=via,
            idempotency_key=idempotency_key,
            batch_id=batch_id,
        )
        outcome["outcome"] = Outcome.DECIDED
    except AlreadyDecided as error:
        outcome.update(outcome=Outcome.ALREADY_DECIDED, code=error.code, message=error.message)
        outcome.update({k: error.details.get(k) for k in ("respondedBy", "respondedByName", "via")})
        outcome["respondedAt"] = error.details.get("respondedAt")
    except Gone as error:
        outcome.update(outcome=Outcome.CLOSED, code=error.code, message=error.message)
    except (Forbidden, InvalidInput) as error:
        outcome.update(outcome=Outcome.REFUSED, code=error.code, message=error.message)
    interaction = await Interaction.get(id=item.interaction_id)
    names = await responder_names([interaction])
    outcome["interaction"] = interaction_view(
        interaction, responder_name=names.get(interaction.responded_by or "")
    )
    return outcome


def _batch_id(idempotency_key: str | None, responder: str, task_id: str) -> str:
    """A repeated request (same key) is the same batch, so it names the same id."""
    if idempotency_key is None:
        return new_id("batch")
    digest = hashlib.sha256(f"{responder}\x00{task_id}\x00{idempotency_key}".encode())
    return f"bat_{digest.hexdigest()[:26]}"


def _invalid(message: str, problems: list[dict[str, Any]]) -> InvalidInput:
    return InvalidInput(
        message,
        code="invalid_batch",
        hint="Fix or remove the items named in details.items, then send the batch again.",
        items=problems,
    )


__all__ = [
    "APPROVE",
    "MAX_BATCH_ITEMS",
    "REJECT",
    "BatchItem",
    "Outcome",
    "answer_for",
    "batchable",
    "batchable_cards",
    "respond_to_batch",
]
