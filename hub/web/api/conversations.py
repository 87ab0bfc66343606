"""Conversations and their messages."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.work.conversations import (
    MAX_AGENTS_PER_CONVERSATION,
    MAX_TITLE_LENGTH,
    create_conversation,
    get_conversation,
    list_conversations,
)
from hub.core.work.messages import MAX_CONTENT_LENGTH, list_messages, post_message
from hub.core.work.views import conversation_view, message_view
from hub.host.identity import member_of
from hub.web.api.answers import ConversationAnswer, ConversationList, MessageList, PostedMessage
from hub.web.api.base import ApiModel, PageQuery, idempotency_key, json_body, query_args

blueprint = Blueprint("api_conversations", __name__, url_prefix="/api/v1")


class NewConversation(ApiModel):
    title: str = Field(min_length=1, max_length=MAX_TITLE_LENGTH)
    agent_ids: list[str] = Field(default_factory=list, max_length=MAX_AGENTS_PER_CONVERSATION)


class NewMessage(ApiModel):
    content: str = Field(min_length=1, max_length=MAX_CONTENT_LENGTH)
    target_agent_id: str | None = Field(
        None, description="Required when the conversation has several agents."
    )
    track_as_task: bool = Field(
        False, description="Also create a task for the target agent (created first)."
    )
    task_title: str | None = Field(
        None, max_length=MAX_TITLE_LENGTH, description="Default: the message's first line."
    )


class Page(PageQuery):
    limit: int = Field(100, ge=1, le=500)


@blueprint.get("/workspaces/<ws>/conversations")
@document_response(ConversationList)
@query_args(Page)
async def conversations(ws: str, query: Page) -> dict[str, Any]:
    """The conversations, most recently active first, a page at a time (``nextCursor``)."""
    await member_of(ws)
    found = await list_conversations(ws, limit=query.limit, cursor=query.cursor)
    return {
        "conversations": [conversation_view(c) for c in found.items],
        "nextCursor": found.next_cursor,
    }


@blueprint.post("/workspaces/<ws>/conversations")
@document_response(ConversationAnswer, 201)
@json_body(NewConversation)
async def new_conversation(ws: str, body: NewConversation) -> tuple[dict[str, Any], int]:
    caller, _ = await member_of(ws, write=True)
    conversation = await create_conversation(
        ws, body.title, body.agent_ids, by=caller.actor, idempotency_key=idempotency_key()
    )
    return conversation_view(conversation), 201


@blueprint.get("/workspaces/<ws>/conversations/<conversation_id>")
@document_response(ConversationAnswer)
async def conversation(ws: str, conversation_id: str) -> dict[str, Any]:
    await member_of(ws)
    return conversation_view(await get_conversation(ws, conversation_id))


@blueprint.get("/workspaces/<ws>/conversations/<conversation_id>/messages")
@document_response(MessageList)
@query_args(Page)
async def messages(ws: str, conversation_id: str, query: Page) -> dict[str, Any]:
    """The latest messages, oldest first (as a thread reads); ``nextCursor`` asks for the
    page of earlier ones."""
    await member_of(ws)
    found = await list_messages(ws, conversation_id, limit=query.limit, cursor=query.cursor)
    return {"messages": [message_view(m) for m in found.items], "nextCursor": found.next_cursor}


@blueprint.post("/workspaces/<ws>/conversations/<conversation_id>/messages")
@document_response(PostedMessage, 201)
@json_body(NewMessage)
async def new_message(
    ws: str, conversation_id: str, body: NewMessage
) -> tuple[dict[str, Any], int]:
    """Send a message to an agent (``message.delivered``); optionally track it as a task.

    Answers ``{message, task}`` (``task`` is null unless tracked)."""
    caller, _ = await member_of(ws, write=True)
    posted = await post_message(
        ws,
        conversation_id,
        body.content,
        by=caller.actor,
        target_agent_id=body.target_agent_id,
        track_as_task=body.track_as_task,
        task_title=body.task_title,
        idempotency_key=idempotency_key(),
    )
    return posted.view(), 201
