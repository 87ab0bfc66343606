"""How the person-side objects look on the wire: camelCase JSON dicts.

One function per object, shared by the JSON API, the client WebSocket and the channels, so
every surface shows the same fields under the same names. Views read only the row they are
given (and, for a few derived fields, the clock); anything that needs another query is
assembled by the service that owns the object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hub.core.store.models import (
    Artifact,
    Conversation,
    Interaction,
    InteractionStatus,
    Message,
    Task,
)
from hub.core.work.sensitive_answers import answer_for_people
from hub.protocol.clock import iso


def actor_kind(actor: str) -> str:
    """``user``, ``agent`` or ``system``: what kind of author an actor string names."""
    kind, _, _ = actor.partition(":")
    return kind if kind in ("user", "agent") else "system"


def conversation_view(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "workspaceId": conversation.workspace_id,
        "title": conversation.title,
        "agentIds": list(conversation.agent_ids or []),
        "createdBy": conversation.created_by,
        "createdAt": iso(conversation.created_at),
        "updatedAt": iso(conversation.updated_at),
    }


def message_view(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "conversationId": message.conversation_id,
        "author": message.author,
        "authorKind": actor_kind(message.author),
        "content": message.content,
        "attachments": list(message.attachments or []),
        "targetAgentId": message.target_agent_id,
        "taskId": message.task_id,
        "createdAt": iso(message.created_at),
    }


def task_view(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "workspaceId": task.workspace_id,
        "conversationId": task.conversation_id,
        "parentTaskId": task.parent_id,
        "title": task.title,
        "description": task.description,
        "status": task.status,
        "progress": task.progress,
        "summary": task.summary,
        "error": task.error,
        "targetAgentId": task.target_agent_id,
        "createdBy": task.created_by,
        # A request is not a state: the status stays until the agent confirms (spec §11).
        "cancelRequested": task.cancel_requested_at is not None,
        "cancelRequestedAt": iso(task.cancel_requested_at),
        "cancelReason": task.cancel_reason or None,
        "createdAt": iso(task.created_at),
        "updatedAt": iso(task.updated_at),
    }


def effective_interaction_status(interaction: Interaction, now: datetime | None = None) -> str:
    """The stored status, except that a pending card past its expiry reads as expired.

    The projection refuses answers after ``expiresAt`` even before an
    ``interaction.expired`` event is logged, so showing it as pending would invite a
    click that can only fail.
    """
    if (
        interaction.status == InteractionStatus.PENDING
        and interaction.expires_at is not None
        and interaction.expires_at <= (now or datetime.now(UTC))
    ):
        return InteractionStatus.EXPIRED.value
    return InteractionStatus(interaction.status).value


def interaction_view(
    interaction: Interaction, *, responder_name: str | None = None
) -> dict[str, Any]:
    return {
        "id": interaction.id,
        "workspaceId": interaction.workspace_id,
        "taskId": interaction.task_id,
        "conversationId": interaction.conversation_id,
        "agentId": interaction.agent_id,
        "type": interaction.type,
        "status": effective_interaction_status(interaction),
        "card": dict(interaction.payload or {}),
        "response": answer_for_people(interaction),  # never a sensitive text
        "respondedBy": interaction.responded_by,
        "respondedByName": responder_name,
        "via": interaction.responded_via,
        "respondedAt": iso(interaction.responded_at),
        # When the answer went out on the agent's connection (hub.core.work.deliveries);
        # None while it waits for an agent that is away.
        "deliveredAt": iso(interaction.delivered_at),
        "expiresAt": iso(interaction.expires_at),
        "createdAt": iso(interaction.created_at),
        # The approval policy that applies (approvers as user ids) and the votes so far.
        "policy": interaction.policy,
        "votes": list(interaction.votes or []),
        # Set once the agent took the card back (status cancelled): why, and when.
        "withdrawal": withdrawal_view(interaction),
    }


def withdrawal_view(interaction: Interaction) -> dict[str, Any] | None:
    """``{reason, note, withdrawnAt}`` for a card its agent withdrew; None otherwise (a
    card cancelled because its task ended carries no withdrawal)."""
    if interaction.withdrawal is None:
        return None
    return {
        "reason": interaction.withdrawal.get("reason"),
        "note": interaction.withdrawal.get("note") or "",
        "withdrawnAt": iso(interaction.withdrawn_at),
    }


def artifact_view(artifact: Artifact) -> dict[str, Any]:
    return {
        "id": artifact.id,
        "taskId": artifact.task_id,
        "name": artifact.name,
        "url": artifact.url,
        "mimeType": artifact.mime_type,
        "summary": artifact.summary,
        "createdBy": artifact.created_by,
        "createdAt": iso(artifact.created_at),
    }
