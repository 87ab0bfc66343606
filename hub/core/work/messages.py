"""The messages a person sends in a conversation (spec §6, §7.2).

A person's message names the agent it is for; the log routes it to that agent as
``message.delivered``. With "track as task", the work is created first (``task.created``)
and the message, which carries the task's id, follows (``message.created``), in that order
as spec §7.2 asks, so the agent already knows the task when the message arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.core.errors import InvalidInput
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.log.idempotency import envelope_id_for
from hub.core.store.models import Conversation, Message, Task
from hub.core.store.paging import Order, Page, page
from hub.core.work.conversations import get_conversation
from hub.core.work.recipients import deliverable_agent
from hub.core.work.tasks import create_task
from hub.core.work.views import message_view, task_view

MAX_CONTENT_LENGTH = 200_000
TASK_TITLE_FROM_MESSAGE_LENGTH = 120
MESSAGE_ORDER = Order("messages", ("created_at",))


@dataclass(frozen=True, slots=True)
class PostedMessage:
    message: Message
    task: Task | None

    def view(self) -> dict[str, Any]:
        return {
            "message": message_view(self.message),
            "task": task_view(self.task) if self.task is not None else None,
        }


async def list_messages(
    workspace_id: str,
    conversation_id: str,
    *,
    limit: int = 200,
    cursor: str | None = None,
    down_to: str | None = None,
) -> Page[Message]:
    """A page of the conversation's messages: the latest ``limit`` (before ``cursor``, the
    earlier ones; with ``down_to``, the latest down to that cursor's), oldest first as a
    thread reads; its cursor leads to earlier messages."""
    conversation = await get_conversation(workspace_id, conversation_id)
    query = Message.filter(workspace_id=workspace_id, conversation_id=conversation.id)
    latest = await page(query, MESSAGE_ORDER, limit=limit, cursor=cursor, down_to=down_to)
    return Page(list(reversed(latest.items)), latest.next_cursor)


async def post_message(
    workspace_id: str,
    conversation_id: str,
    content: str,
    *,
    by: str,
    target_agent_id: str | None = None,
    track_as_task: bool = False,
    task_title: str | None = None,
    idempotency_key: str | None = None,
) -> PostedMessage:
    """A person's message, delivered to ``target_agent_id``; optionally tracked as a task.

    Without a target, a conversation with exactly one agent addresses that agent; one with
    several needs the target named; one with none keeps the message as a note.
    """
    if not content.strip():
        raise InvalidInput("The message is empty.", code="content_required")
    if len(content) > MAX_CONTENT_LENGTH:
        raise InvalidInput(
            f"The message is longer than {MAX_CONTENT_LENGTH} characters.",
            code="content_too_long",
            hint="Send less at once, or attach the rest as a link.",
        )
    conversation = await get_conversation(workspace_id, conversation_id)
    target = await _resolve_target(conversation, target_agent_id, required=track_as_task)
    task: Task | None = None
    if track_as_task:
        assert target is not None
        task = await create_task(
            workspace_id,
            task_title or _title_from(content),
            by=by,
            target_agent_id=target,
            description=content,
            conversation_id=conversation.id,
            idempotency_key=idempotency_key,
        )
    payload: dict[str, Any] = {
        "messageId": new_id("message"),
        "conversationId": conversation.id,
        "content": content,
    }
    if target is not None:
        payload["targetAgentId"] = target
    if task is not None:
        payload["taskId"] = task.id
    result = await append_event(
        workspace_id,
        "message.created",
        payload,
        actor=by,
        conversation_id=conversation.id,
        task_id=task.id if task is not None else None,
        envelope_id=envelope_id_for(idempotency_key, actor=by, purpose="message"),
    )
    message = await Message.get(id=result.event.payload["messageId"])
    return PostedMessage(message=message, task=task)


async def _resolve_target(
    conversation: Conversation, target_agent_id: str | None, *, required: bool
) -> str | None:
    members = list(conversation.agent_ids or [])
    if target_agent_id is None:
        if len(members) == 1:
            target_agent_id = members[0]
        elif members or required:
            raise InvalidInput(
                "Say which agent the message is for.",
                code="target_agent_required",
                hint="Set 'targetAgentId' to one of the conversation's agents.",
            )
        else:
            return None
    if target_agent_id not in members:
        raise InvalidInput(
            f"Agent {target_agent_id} is not part of this conversation.",
            code="agent_not_in_conversation",
            hint="Pick one of the conversation's agents, or start a conversation with this one.",
        )
    agent = await deliverable_agent(conversation.workspace_id, target_agent_id)
    return agent.id


def _title_from(content: str) -> str:
    first_line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    if len(first_line) <= TASK_TITLE_FROM_MESSAGE_LENGTH:
        return first_line
    return first_line[: TASK_TITLE_FROM_MESSAGE_LENGTH - 1].rstrip() + "…"
