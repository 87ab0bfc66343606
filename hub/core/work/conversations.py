"""Conversations: the context a person shares with one or more agents (spec §6).

What is said in them is ``hub.core.work.messages``. A task started without a conversation
gets one when its first message arrives (``task_conversation_id``), so every task has a
place for what is said about it.
"""

from __future__ import annotations

import base64
import hashlib

from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import PREFIXES, new_id
from hub.core.log.events import append_event
from hub.core.log.idempotency import envelope_id_for
from hub.core.store.models import Conversation
from hub.core.store.paging import Order, Page, page
from hub.core.work.recipients import deliverable_agents

MAX_TITLE_LENGTH = 500
MAX_AGENTS_PER_CONVERSATION = 20
CONVERSATION_ORDER = Order("conversations", ("updated_at",))


def task_conversation_id(task_id: str) -> str:
    """The id of the conversation a task without one is given, derived from the task's id.

    Derived, not drawn: the projection opens it when the task's first message is applied,
    and a replay of the log must open the same one again.
    """
    digest = hashlib.sha256(task_id.encode()).digest()
    return f"{PREFIXES['conversation']}_{base64.b32encode(digest).decode()[:26]}"


def clean_title(title: str, *, what: str = "title") -> str:
    cleaned = " ".join(title.split())
    if not cleaned:
        raise InvalidInput(f"The {what} is empty.", code="title_required")
    if len(cleaned) > MAX_TITLE_LENGTH:
        raise InvalidInput(
            f"The {what} is longer than {MAX_TITLE_LENGTH} characters.", code="title_too_long"
        )
    return cleaned


async def create_conversation(
    workspace_id: str,
    title: str,
    agent_ids: list[str],
    *,
    by: str,
    idempotency_key: str | None = None,
) -> Conversation:
    title = clean_title(title)
    if len(agent_ids) > MAX_AGENTS_PER_CONVERSATION:
        raise InvalidInput(
            f"A conversation holds at most {MAX_AGENTS_PER_CONVERSATION} agents.",
            code="too_many_agents",
        )
    agents = await deliverable_agents(workspace_id, agent_ids)
    conversation_id = new_id("conversation")
    result = await append_event(
        workspace_id,
        "conversation.created",
        {"conversationId": conversation_id, "title": title, "agentIds": [a.id for a in agents]},
        actor=by,
        conversation_id=conversation_id,
        envelope_id=envelope_id_for(idempotency_key, actor=by, purpose="conversation"),
    )
    return await get_conversation(workspace_id, result.event.payload["conversationId"])


async def list_conversations(
    workspace_id: str, *, limit: int = 100, cursor: str | None = None
) -> Page[Conversation]:
    """A page of the workspace's conversations, the most recently active first. One that
    becomes active while a client walks the pages moves to the first page: that is where
    the most recently active belongs."""
    query = Conversation.filter(workspace_id=workspace_id)
    return await page(query, CONVERSATION_ORDER, limit=limit, cursor=cursor)


async def get_conversation(workspace_id: str, conversation_id: str) -> Conversation:
    conversation = await Conversation.filter(id=conversation_id, workspace_id=workspace_id).first()
    if conversation is None:
        raise NotFound(
            f"Conversation {conversation_id} does not exist in this workspace.",
            code="conversation_not_found",
        )
    return conversation
