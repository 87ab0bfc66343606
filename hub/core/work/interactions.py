"""A person's answers to interaction cards (spec §7.3).

``respond_to_interaction`` is the one door every surface (web, API, email, Telegram,
notebook) goes through. It logs ``interaction.resolved``; the projection, under the
workspace's lock, checks the answer against the card and refuses a second answer, so
whichever surface answers first wins and the others learn who decided, how and when.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hub.core.approvals.permissions import ensure_may_answer
from hub.core.approvals.policies import is_quorum
from hub.core.approvals.policy_clock import resolve_if_decided
from hub.core.errors import AlreadyDecided, InvalidInput, NotFound
from hub.core.log.events import append_event
from hub.core.log.idempotency import envelope_id_for
from hub.core.store.models import Interaction, InteractionStatus, User
from hub.core.work.sensitive_answers import answer_for_people
from hub.core.work.views import interaction_view
from hub.protocol.clock import iso

# Surfaces name themselves with a short token ("web", "api", "telegram", "email", ...).
_VIA = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
MAX_ACTOR_LENGTH = 100


async def get_interaction(workspace_id: str, interaction_id: str) -> Interaction:
    interaction = await Interaction.filter(id=interaction_id, workspace_id=workspace_id).first()
    if interaction is None:
        raise NotFound(
            f"Interaction {interaction_id} does not exist in this workspace.",
            code="interaction_not_found",
        )
    return interaction


async def list_interactions(
    workspace_id: str, *, task_id: str | None = None, pending_only: bool = False
) -> list[Interaction]:
    query = Interaction.filter(workspace_id=workspace_id)
    if task_id is not None:
        query = query.filter(task_id=task_id)
    if pending_only:
        query = query.filter(status=InteractionStatus.PENDING)
    return await query.order_by("created_at", "id")


async def responder_names(interactions: Iterable[Interaction]) -> dict[str, str]:
    """Display names of the people who answered, keyed by their actor string."""
    actors = {i.responded_by for i in interactions if i.responded_by}
    return await display_names(actors)


async def display_names(actors: Iterable[str]) -> dict[str, str]:
    user_ids = {actor.partition(":")[2]: actor for actor in actors if actor.startswith("user:")}
    if not user_ids:
        return {}
    rows = await User.filter(id__in=list(user_ids)).values_list("id", "display_name")
    return {user_ids[str(user_id)]: str(name) for user_id, name in rows}


async def interaction_detail(workspace_id: str, interaction_id: str) -> dict[str, Any]:
    """The interaction's view, with the names of who answered and of who voted on it (a
    person's client shows a quorum's votes by name, as the hub's own surfaces do)."""
    interaction = await get_interaction(workspace_id, interaction_id)
    voters = {str(v.get("actor")) for v in interaction.votes or [] if v.get("actor")}
    names = await display_names({*voters, interaction.responded_by or ""} - {""})
    view = interaction_view(interaction, responder_name=names.get(interaction.responded_by or ""))
    view["voterNames"] = {actor: names[actor] for actor in sorted(voters) if actor in names}
    return view


async def respond_to_interaction(
    workspace_id: str,
    interaction_id: str,
    response: dict[str, Any],
    *,
    responder: str,
    via: str,
    idempotency_key: str | None = None,
    batch_id: str | None = None,
) -> Interaction:
    """Record ``responder``'s answer given on surface ``via``; returns the resolved card.

    ``batch_id`` marks an answer given together with others
    (``hub.core.work.batch_answers``); the event carries it so the audit trail shows
    the answers as one batch.

    On a card whose approval policy is a quorum the answer is a vote (``interaction.voted``)
    and the card resolves once the votes decide; ``Conflict`` (``already_voted``) tells a
    voter who voted before. Raises ``Forbidden`` (``not_allowed_to_answer`` for a viewer
    or a stranger) when the responder may not answer (``hub.core.approvals.permissions``),
    ``InvalidInput`` (code ``invalid_response``) when the answer does not fit the card,
    ``AlreadyDecided`` (409) when someone answered first — its details say who
    (``respondedBy``, ``respondedByName``), how (``via``) and when (``respondedAt``) — and
    ``Gone`` when the card expired or was cancelled with its task.
    """
    if not _VIA.match(via):
        raise InvalidInput(f"{via!r} is not a surface name.", code="invalid_via")
    if not responder or len(responder) > MAX_ACTOR_LENGTH:
        raise InvalidInput("The responder must be an actor id.", code="invalid_responder")
    if not isinstance(response, dict):
        raise InvalidInput("The answer must be a JSON object.", code="invalid_response")
    interaction = await get_interaction(workspace_id, interaction_id)
    await ensure_may_answer(interaction, responder)
    quorum = is_quorum(interaction)
    payload: dict[str, Any] = {
        "interactionId": interaction.id,
        "response": response,
        "respondedBy": responder,
        "via": via,
    }
    if batch_id is not None:
        payload["batchId"] = batch_id
    try:
        await append_event(
            workspace_id,
            # On a quorum card an answer is a vote; the votes resolve it (hub.core.approvals.votes).
            "interaction.voted" if quorum else "interaction.resolved",
            payload,
            actor=responder,
            task_id=interaction.task_id,
            conversation_id=interaction.conversation_id,
            envelope_id=envelope_id_for(
                idempotency_key, actor=responder, purpose=f"respond:{interaction.id}"
            ),
        )
    except AlreadyDecided:
        raise await _already_decided(workspace_id, interaction.id) from None
    if quorum:
        await resolve_if_decided(workspace_id, interaction.id)
    return await get_interaction(workspace_id, interaction.id)


async def _already_decided(workspace_id: str, interaction_id: str) -> AlreadyDecided:
    """The same refusal, naming the person rather than only their id."""
    interaction = await get_interaction(workspace_id, interaction_id)
    names = await responder_names([interaction])
    # A person reads this (the web flashes it): a name, never the actor's id.
    who = names.get(interaction.responded_by or "") or "someone"
    when = iso(interaction.responded_at)
    return AlreadyDecided(
        f"Already decided by {who} via {interaction.responded_via} at {when}.",
        respondedBy=interaction.responded_by,
        respondedByName=names.get(interaction.responded_by or ""),
        via=interaction.responded_via,
        respondedAt=when,
        response=answer_for_people(interaction),
        interaction=interaction_view(
            interaction, responder_name=names.get(interaction.responded_by or "")
        ),
    )
