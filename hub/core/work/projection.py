"""How each event type changes the projected tables (tasks, interactions, messages, ...).

``apply`` runs inside the append transaction, after the workspace's sequence row is locked,
so the checks here see a state no other append can change under them: this is where "is
this transition allowed?" and "was this card already answered?" are decided. A handler
raises a ``HubError`` to refuse the event; the transaction then rolls back whole.

Handlers read only the event and the projections, never the clock or other tables that the
log does not rebuild, so replaying the log reproduces the same rows (``rebuild_projections``).
A handler may normalise ``event.payload`` (the stored event then holds the normalised form)
and sets ``event.recipient_agent_id`` for events that must reach an agent.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from tortoise.exceptions import IntegrityError

from hub.core.agents import lifecycle as agent_lifecycle
from hub.core.approvals import policies, votes
from hub.core.errors import (
    AlreadyDecided,
    Conflict,
    Forbidden,
    Gone,
    InvalidInput,
    NotFound,
    refused_answer,
)
from hub.core.log import bulk_inserts
from hub.core.log.fresh_rows import fresh
from hub.core.log.handlers import Connection, EventHandlers
from hub.core.notify import notifications
from hub.core.people import member_changes
from hub.core.store.models import (
    PROJECTION_MODELS,
    Artifact,
    Conversation,
    Event,
    Interaction,
    InteractionStatus,
    Message,
    Task,
)
from hub.core.task_states import TERMINAL_STATUSES, TaskStatus, check_transition, parse_status
from hub.core.work import inbox_counts
from hub.core.work.agent_scope import actor_agent_id, check_conversation, writable_task
from hub.core.work.conversations import task_conversation_id
from hub.core.work.sensitive_answers import answer_for_people
from hub.protocol.interactions import (
    InteractionCard,
    ResponseError,
    validate_response,
)
from hub.protocol.lap import InteractionWithdrawn

handlers = EventHandlers()


async def apply(event: Event, connection: Connection, *, replaying: bool = False) -> None:
    """Apply ``event`` to the projections; types without a handler are stored only."""
    if not replaying:  # what is in the log stays: a replay re-applies it whole
        await agent_lifecycle.refuse_revoked_actor(event, connection)
    with inbox_counts.collecting() as counts:
        await handlers.apply(event, connection)
    await counts.write(event.workspace_id, connection)
    if not replaying:
        # Agent rows are entities, not projections: changed with their event, never rebuilt.
        await agent_lifecycle.handlers.apply(event, connection)
        await member_changes.handlers.apply(event, connection)
        # Notifications commit with their cause, so none is lost or sent for nothing.
        await notifications.enqueue_for(event, connection)


async def clear(workspace_id: str, connection: Connection) -> None:
    for model in PROJECTION_MODELS:
        await model.filter(workspace_id=workspace_id).using_db(connection).delete()


# --- helpers ----------------------------------------------------------------------------


def _require(payload: dict[str, Any], key: str) -> Any:
    value = payload.get(key)
    if value is None or value == "":
        raise InvalidInput(f"The payload needs '{key}'.")
    return value


def _require_text(**values: Any) -> None:
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"The payload's '{key}' must be text.")


def _about(event: Event, task_id: str | None) -> None:
    """Stamp the task an event concerns, whichever way the sender named it (envelope or
    payload), so that a task's timeline is one query on ``event.task_id``."""
    if task_id:
        event.task_id = task_id


async def _save_moved(task: Task, before: str, event: Event, connection: Connection) -> None:
    """Save ``task``, moved from ``before`` to its status by ``event``; an ended task's
    open cards are cancelled with it."""
    counts = inbox_counts.changes()
    if task.status in TERMINAL_STATUSES:
        still_open = Interaction.filter(task_id=task.id, status=InteractionStatus.PENDING)
        for card in await still_open.using_db(connection).only(
            "id", "agent_id", "waiting_on", "voted_by"
        ):
            counts.card_closed(card)
        await still_open.using_db(connection).update(status=InteractionStatus.CANCELLED)
    counts.task_moved(task, before, event.recorded_at)
    task.updated_at = event.recorded_at
    await task.save(using_db=connection)


# --- conversations and messages ---------------------------------------------------------


@handlers.on("conversation.created")
async def _conversation_created(event: Event, connection: Connection) -> None:
    payload = event.payload
    await Conversation.create(
        using_db=connection,
        id=_require(payload, "conversationId"),
        workspace_id=event.workspace_id,
        title=_require(payload, "title"),
        agent_ids=list(payload.get("agentIds") or []),
        created_by=event.actor,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
    )


# In plain SQL: through the ORM this one update cost five times the statement itself, on
# the path of every message an agent sends.
_TOUCH_CONVERSATION = {
    "sqlite": "UPDATE conversation SET updated_at = ? WHERE id = ? AND workspace_id = ?",
    "postgres": "UPDATE conversation SET updated_at = $1 WHERE id = $2 AND workspace_id = $3",
}


@handlers.on("message.created")
async def _message_created(event: Event, connection: Connection) -> None:
    # The busiest event of all, so its writes are shared within a group commit (see
    # hub.core.log.bulk_inserts). The update finds the conversation (in this workspace), once
    # per batch; the primary key finds a taken message id, instead of a look first.
    payload = event.payload
    conversation_id = payload.get("conversationId") or event.conversation_id
    message_id = _require(payload, "messageId")
    target = payload.get("targetAgentId")
    content = payload.get("content") or ""
    task_id = payload.get("taskId") or event.task_id
    # Its statements take the values as given (plain SQL, hub.core.log.fresh_rows), so text is
    # checked to be text: a number would otherwise fail the whole batch's insert.
    _require_text(
        conversationId=conversation_id,
        messageId=message_id,
        content=content,
        targetAgentId=target,
        taskId=task_id,
    )
    task = None
    if task_id and (conversation_id is None or actor_agent_id(event.actor) is not None):
        task = await writable_task(event, connection, task_id)
        conversation_id = await _conversation_of_task(task, conversation_id, event, connection)
        event.payload = payload = {**payload, "conversationId": conversation_id}
    if not conversation_id:
        raise InvalidInput(
            "A message needs a conversation or a task.",
            code="conversation_required",
            hint="Set conversationId, or taskId for a message about a task (it goes to the "
            "task's conversation).",
        )
    await check_conversation(event, connection, conversation_id, task)
    event.conversation_id = conversation_id
    if bulk_inserts.once(("conversation active", conversation_id, event.recorded_at)):
        touched, _ = await connection.execute_query(
            _TOUCH_CONVERSATION[connection.capabilities.dialect],
            [event.recorded_at, conversation_id, event.workspace_id],
        )
        if not touched:
            raise NotFound(
                f"Conversation {conversation_id} does not exist in this workspace.",
                code="conversation_not_found",
            )
    message = fresh(
        Message,
        id=message_id,
        workspace_id=event.workspace_id,
        conversation_id=conversation_id,
        author=event.actor,
        content=content,
        attachments=list(payload.get("attachments") or []),
        target_agent_id=target,
        task_id=task_id,
        created_at=event.recorded_at,
    )
    try:
        await bulk_inserts.insert(message, connection)
    except IntegrityError:
        # The append's transaction rolls back (on PostgreSQL it must: the error ended it).
        raise Conflict(f"Message id {message_id} is taken.", code="id_in_use") from None
    _about(event, task_id)
    if actor_agent_id(event.actor) is None and target:
        event.recipient_agent_id = target


async def _conversation_of_task(
    task: Task, conversation_id: str | None, event: Event, connection: Connection
) -> str:
    """The conversation a message about ``task`` goes to: the one it names, else the task's.

    A task started without a conversation is given one with its first message, titled as
    the task and shared with its agent, so the message has a place a person finds from the
    task. Its id is derived from the task's (``task_conversation_id``): the stored event
    names it, and a replay that meets it opens the same conversation again.
    """
    opened = task_conversation_id(task.id)
    conversation_id = conversation_id or task.conversation_id or opened
    if task.conversation_id is None and conversation_id == opened:
        await Conversation.create(
            using_db=connection,
            id=opened,
            workspace_id=event.workspace_id,
            title=task.title,
            agent_ids=[task.target_agent_id] if task.target_agent_id else [],
            created_by=task.created_by,
            created_at=event.recorded_at,
            updated_at=event.recorded_at,
        )
        task.conversation_id = opened
        await task.save(using_db=connection, update_fields=["conversation_id"])
    return conversation_id


# --- tasks ------------------------------------------------------------------------------


@handlers.on("task.created")
async def _task_created(event: Event, connection: Connection) -> None:
    payload = event.payload
    task_id = _require(payload, "taskId")
    parent_id = payload.get("parentTaskId")
    if parent_id:
        await writable_task(event, connection, parent_id)
    conversation_id = payload.get("conversationId") or event.conversation_id
    if conversation_id:
        await check_conversation(event, connection, conversation_id)
    task = await Task.create(
        using_db=connection,
        id=task_id,
        workspace_id=event.workspace_id,
        conversation_id=conversation_id,
        parent_id=parent_id,
        title=_require(payload, "title"),
        description=payload.get("description") or "",
        status=TaskStatus.QUEUED.value,
        target_agent_id=payload.get("targetAgentId"),
        created_by=event.actor,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
    )
    inbox_counts.changes().task_moved(task, None, event.recorded_at)
    _about(event, task_id)
    # Assigned to the agent: a task it opened for itself is not news to it, and would start
    # its work again (``task.assigned``); nor would it be worth a replay.
    if task.target_agent_id != actor_agent_id(event.actor):
        event.recipient_agent_id = task.target_agent_id


@handlers.on("task.child_created")
async def _child_created(event: Event, connection: Connection) -> None:
    payload = event.payload
    parent = await writable_task(event, connection, _require(payload, "parentTaskId"))
    child_id = _require(payload, "taskId")
    if await Task.filter(id=child_id).using_db(connection).exists():
        raise Conflict(f"Task id {child_id} is taken.", code="id_in_use")
    child = await Task.create(
        using_db=connection,
        id=child_id,
        workspace_id=event.workspace_id,
        conversation_id=parent.conversation_id,
        parent_id=parent.id,
        title=_require(payload, "title"),
        description=payload.get("description") or "",
        status=parse_status(payload.get("status") or TaskStatus.QUEUED.value).value,
        progress=payload.get("progress"),
        target_agent_id=parent.target_agent_id,
        created_by=event.actor,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
    )
    inbox_counts.changes().task_moved(child, None, event.recorded_at)
    _about(event, child_id)


@handlers.on("task.accepted")
async def _task_accepted(event: Event, connection: Connection) -> None:
    task = await writable_task(event, connection, event.payload.get("taskId") or event.task_id)
    before = task.status
    task.status = check_transition(task.status, TaskStatus.RUNNING).value
    await _save_moved(task, before, event, connection)
    _about(event, task.id)


@handlers.on("task.status_changed")
async def _status_changed(event: Event, connection: Connection) -> None:
    payload = event.payload
    task = await writable_task(event, connection, payload.get("taskId") or event.task_id)
    target = parse_status(_require(payload, "status"))
    before = task.status
    if target != task.status:
        task.status = check_transition(task.status, target).value
    elif target in TERMINAL_STATUSES:
        check_transition(task.status, target)  # raises: an ended task takes no reports
    if "progress" in payload and payload["progress"] is not None:
        task.progress = payload["progress"]
    if payload.get("summary") is not None:
        task.summary = payload["summary"]
    if payload.get("error") is not None:
        task.error = payload["error"]
    await _save_moved(task, before, event, connection)
    _about(event, task.id)


@handlers.on("task.cancel_requested")
async def _cancel_requested(event: Event, connection: Connection) -> None:
    task = await writable_task(event, connection, event.payload.get("taskId") or event.task_id)
    if task.status in TERMINAL_STATUSES:
        raise Conflict(
            f"Task {task.id} has already ended ({task.status}).",
            code="task_ended",
            hint="Nothing to cancel.",
        )
    # A request, not a state: the task stays as it is until its agent confirms.
    task.cancel_requested_at = event.recorded_at
    task.cancel_reason = event.payload.get("reason") or ""
    task.updated_at = event.recorded_at
    await task.save(using_db=connection)
    _about(event, task.id)
    event.recipient_agent_id = task.target_agent_id


# --- interactions -----------------------------------------------------------------------


@handlers.on("interaction.requested")
async def _interaction_requested(event: Event, connection: Connection) -> None:
    try:
        card = InteractionCard.model_validate(_require(event.payload, "interaction"))
    except ValidationError as error:
        raise InvalidInput(
            "The interaction card is not valid: " + _first_problem(error),
            code="invalid_interaction",
            hint="See docs/protocol.md, 'interaction.requested', for the card's fields.",
        ) from None
    if card.id is None or await Interaction.filter(id=card.id).using_db(connection).exists():
        raise Conflict(f"Interaction id {card.id} is missing or taken.", code="id_in_use")
    task = None
    task_id = event.task_id or event.payload.get("taskId")
    if task_id:
        task = await writable_task(event, connection, task_id)
        if task.status == TaskStatus.QUEUED:
            raise Conflict(
                f"Task {task.id} is still queued.",
                code="task_not_accepted",
                hint="Send task.accepted before asking a person about the task.",
            )
        if task.status != TaskStatus.WAITING_FOR_HUMAN:
            before = task.status
            task.status = check_transition(task.status, TaskStatus.WAITING_FOR_HUMAN).value
            await _save_moved(task, before, event, connection)
    if event.conversation_id:
        await check_conversation(event, connection, event.conversation_id, task)
    # Reads the workspace's rules the first time only; the event then carries the policy,
    # so a replay gives the same card whatever the rules say by then.
    card.policy = await policies.choose_policy(event, card, actor_agent_id(event.actor), connection)
    event.payload = {**event.payload, "interaction": card.wire()}
    _about(event, task.id if task else None)
    interaction = Interaction(
        id=card.id,
        workspace_id=event.workspace_id,
        task_id=task.id if task else None,
        conversation_id=event.conversation_id or (task.conversation_id if task else None),
        agent_id=actor_agent_id(event.actor),
        type=card.type.value,
        status=InteractionStatus.PENDING,
        payload=card.wire(),
        expires_at=card.expires_at,
        created_at=event.recorded_at,
        policy=card.policy.wire() if card.policy else None,
        votes=[],
    )
    interaction.policy_due_at = policies.policy_due_at(interaction)
    interaction.waiting_on = inbox_counts.waiting_on(interaction.policy)
    interaction.voted_by = ""
    await interaction.save(using_db=connection, force_create=True)
    inbox_counts.changes().card_opened(interaction)


async def _answerable(event: Event, connection: Connection) -> Interaction:
    """The event's card, locked, if it still takes an answer; else the refusal saying why."""
    interaction = await _locked_card(event, connection)
    _refuse_unless_open(interaction, event)
    return interaction


async def _locked_card(event: Event, connection: Connection) -> Interaction:
    """The card the event names (``interactionId``), locked, in the event's workspace."""
    interaction_id = _require(event.payload, "interactionId")
    interaction = (
        await Interaction.filter(id=interaction_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .select_for_update()
        .first()
    )
    if interaction is None:
        raise NotFound(
            f"Interaction {interaction_id} does not exist in this workspace.",
            code="interaction_not_found",
        )
    return interaction


def _refuse_unless_open(interaction: Interaction, event: Event) -> None:
    """Refuse an event on a card that takes nothing any more, saying why: answered (with
    who, how, when and what), expired, or withdrawn.

    The policy's own steps (``hub:policy``) may act on a card past its expiry: applying
    the expiry default is one of them.
    """
    if interaction.status == InteractionStatus.RESOLVED:
        raise AlreadyDecided(
            f"Already decided by {interaction.responded_by} via {interaction.responded_via} "
            f"at {interaction.responded_at:%Y-%m-%d %H:%M:%S} UTC.",
            respondedBy=interaction.responded_by,
            via=interaction.responded_via,
            respondedAt=interaction.responded_at.isoformat() if interaction.responded_at else None,
            response=answer_for_people(interaction),
        )
    if interaction.status != InteractionStatus.PENDING:
        # Said to the person who pressed as much as to a script: the card, not its id.
        reason = (interaction.withdrawal or {}).get("reason")
        if reason == "answered_in_terminal":
            said = "Answered in the terminal; this card takes no answer."
        elif interaction.withdrawal is not None:
            said = "The agent withdrew this card; it takes no answer."
        else:
            said = f"This card was {interaction.status.value} and takes no answer."
        raise Gone(said, code=f"interaction_{interaction.status.value}")
    if (
        event.actor != policies.POLICY_ACTOR
        and interaction.expires_at is not None
        and interaction.expires_at <= event.recorded_at
    ):
        raise Gone(
            f"Interaction {interaction.id} expired at {interaction.expires_at:%Y-%m-%d %H:%M} UTC.",
            code="interaction_expired",
            hint="Ask the agent to send the request again if it is still needed.",
        )


@handlers.on("interaction.resolved")
async def _interaction_resolved(event: Event, connection: Connection) -> None:
    payload = event.payload
    interaction = await _answerable(event, connection)
    expiry_default = event.actor == policies.POLICY_ACTOR and payload.get("reason") == "expired"
    if expiry_default:
        _refuse_expiry_if_votes_decided(interaction)
    if policies.is_quorum(interaction) and not expiry_default:
        # A quorum card resolves only from its votes, never around them.
        decided = votes.decision(interaction)
        if event.actor != policies.POLICY_ACTOR or decided is None:
            raise Conflict(
                f"Interaction {interaction.id} is decided by a quorum of votes.",
                code="quorum_not_reached",
                hint="Vote on it (respond to it); it resolves once enough approvers agree.",
            )
        response, deciding = decided
        payload = {**payload, "respondedBy": deciding["actor"], "via": deciding["via"]}
    else:
        try:
            card = InteractionCard.model_validate(interaction.payload)
            response = validate_response(card, payload.get("response") or {})
        except ResponseError as error:
            raise refused_answer(str(error), error.code) from None
        if interaction.votes:
            response["votes"] = list(interaction.votes)
    event.payload = {**payload, "response": response}
    inbox_counts.changes().card_closed(interaction)
    interaction.status = InteractionStatus.RESOLVED
    interaction.response = response
    interaction.responded_by = _require(payload, "respondedBy")
    interaction.responded_via = _require(payload, "via")
    interaction.responded_at = event.recorded_at
    interaction.policy_due_at = None
    await interaction.save(using_db=connection)
    await _card_closed(interaction, event, connection)


async def _card_closed(interaction: Interaction, event: Event, connection: Connection) -> None:
    """A card stopped waiting (answered, or expired undecided): the agent that asked hears
    of it, and its task runs again once none of its cards waits for a person."""
    event.recipient_agent_id = interaction.agent_id
    await _task_goes_on(interaction, event, connection)


async def _task_goes_on(interaction: Interaction, event: Event, connection: Connection) -> None:
    """The card's task runs again once none of its cards waits for a person."""
    _about(event, interaction.task_id)
    if interaction.task_id:
        task = await Task.filter(id=interaction.task_id).using_db(connection).first()
        still_waiting = (
            await Interaction.filter(task_id=interaction.task_id, status=InteractionStatus.PENDING)
            .using_db(connection)
            .exists()
        )
        if task is not None and task.status == TaskStatus.WAITING_FOR_HUMAN and not still_waiting:
            task.status = check_transition(task.status, TaskStatus.RUNNING).value
            await _save_moved(task, TaskStatus.WAITING_FOR_HUMAN.value, event, connection)


@handlers.on("interaction.delivered")
async def _interaction_delivered(event: Event, connection: Connection) -> None:
    # The answer went out to the agent (hub.core.work.deliveries); the first time stands.
    if event.actor != "system":
        raise Forbidden("Only the hub records a delivery.", code="not_allowed")
    interaction = await _locked_card(event, connection)
    _about(event, interaction.task_id)
    if interaction.delivered_at is None:
        interaction.delivered_at = event.recorded_at
        await interaction.save(using_db=connection, update_fields=["delivered_at"])


def _refuse_expiry_if_votes_decided(interaction: Interaction) -> None:
    """The votes a quorum card holds outrank its expiry. The clock reads a card, then a
    deciding vote may commit before the clock's expiry step does: that step was planned
    without the vote and must not stand; the clock's next pass resolves the card from them."""
    if policies.is_quorum(interaction) and votes.decision(interaction) is not None:
        raise Conflict(
            f"Interaction {interaction.id} was decided by its votes before it expired.",
            code="decided_by_votes",
            hint="Nothing to do: the card resolves with what its votes decided.",
        )


@handlers.on("interaction.expired")
async def _interaction_expired(event: Event, connection: Connection) -> None:
    interaction_id = _require(event.payload, "interactionId")
    interaction = (
        await Interaction.filter(
            id=interaction_id, workspace_id=event.workspace_id, status=InteractionStatus.PENDING
        )
        .using_db(connection)
        .select_for_update()
        .first()
    )
    if interaction is None:
        raise Conflict(f"Interaction {interaction_id} is not pending.", code="not_pending")
    _refuse_expiry_if_votes_decided(interaction)
    inbox_counts.changes().card_closed(interaction)
    interaction.status = InteractionStatus.EXPIRED
    interaction.policy_due_at = None
    await interaction.save(using_db=connection, update_fields=["status", "policy_due_at"])
    await _card_closed(interaction, event, connection)


@handlers.on("interaction.withdrawn")
async def _interaction_withdrawn(event: Event, connection: Connection) -> None:
    """The agent that asked a card takes it back before anyone answered it.

    Only that agent may: a card is its question. Who it is is checked before the card's
    state, so another agent learns nothing of an answer that is not its own. A card that
    is no longer open is refused as an answer would be, so an agent that was too late hears
    that the person's answer won (``already_decided``, with the answer).
    """
    try:
        withdrawal = InteractionWithdrawn.model_validate(event.payload)
    except ValidationError as error:
        raise InvalidInput(
            "The withdrawal is not valid: " + _first_problem(error),
            code="invalid_payload",
            hint="See docs/protocol.md, 'interaction.withdrawn', for its fields.",
        ) from None
    interaction = await _locked_card(event, connection)
    agent_id = actor_agent_id(event.actor)
    if agent_id is None or interaction.agent_id != agent_id:
        raise Forbidden(
            f"Interaction {interaction.id} was not asked by this agent.",
            code="interaction_not_yours",
            hint="An agent may withdraw only the cards it asked itself.",
        )
    _refuse_unless_open(interaction, event)
    kept = {"reason": withdrawal.reason, "note": withdrawal.note}
    event.payload = {"interactionId": interaction.id, **kept}
    event.task_id, event.conversation_id = interaction.task_id, interaction.conversation_id
    inbox_counts.changes().card_closed(interaction)
    interaction.status = InteractionStatus.CANCELLED
    interaction.withdrawal = kept
    interaction.withdrawn_at = event.recorded_at
    interaction.policy_due_at = None  # nothing more to remind of, escalate or expire
    await interaction.save(
        using_db=connection,
        update_fields=["status", "withdrawal", "withdrawn_at", "policy_due_at"],
    )
    # The agent knows (it sent this): the event is addressed to no one.
    await _task_goes_on(interaction, event, connection)


@handlers.on("interaction.voted")
async def _interaction_voted(event: Event, connection: Connection) -> None:
    interaction = await _answerable(event, connection)
    if not policies.is_quorum(interaction):
        raise Conflict(
            f"Interaction {interaction.id} takes one answer, not votes.",
            code="not_a_quorum",
            hint="Answer it with interaction.resolved (respond to it).",
        )
    await votes.record_vote(event, interaction, connection)
    voter = inbox_counts.voter_of(str(event.payload.get("respondedBy") or ""))
    inbox_counts.changes().card_voted(interaction, voter)
    await interaction.save(using_db=connection, update_fields=["waiting_on", "voted_by"])
    _about(event, interaction.task_id)


@handlers.on("interaction.reminded")
async def _interaction_reminded(event: Event, connection: Connection) -> None:
    interaction = await _answerable(event, connection)
    await policies.record_reminder(event, interaction, connection)
    _about(event, interaction.task_id)


@handlers.on("interaction.escalated")
async def _interaction_escalated(event: Event, connection: Connection) -> None:
    interaction = await _answerable(event, connection)
    await policies.record_escalation(event, interaction, connection)
    escalated_to = [str(p) for p in event.payload.get("escalateTo") or []]
    inbox_counts.changes().card_named(interaction, escalated_to)
    await interaction.save(using_db=connection, update_fields=["waiting_on"])
    _about(event, interaction.task_id)


# --- artifacts --------------------------------------------------------------------------


@handlers.on("artifact.created")
async def _artifact_created(event: Event, connection: Connection) -> None:
    payload = event.payload
    task_id = payload.get("taskId") or event.task_id
    if task_id:
        await writable_task(event, connection, task_id)
    _about(event, task_id)
    artifact_id = _require(payload, "artifactId")
    if await Artifact.filter(id=artifact_id).using_db(connection).exists():
        raise Conflict(f"Artifact id {artifact_id} is taken.", code="id_in_use")
    await Artifact.create(
        using_db=connection,
        id=artifact_id,
        workspace_id=event.workspace_id,
        task_id=task_id,
        name=_require(payload, "name"),
        url=_require(payload, "url"),
        mime_type=payload.get("mimeType"),
        summary=payload.get("summary") or "",
        created_by=event.actor,
        created_at=event.recorded_at,
    )


def _first_problem(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(p) for p in problem["loc"]) or "card"
    return f"{where}: {problem['msg']}"
