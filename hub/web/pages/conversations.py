"""Conversations (spec §6, §7.2): the list, a thread, the composer.

The thread mixes the conversation's messages and its cards in the order they happened, as
in the layout of spec §8.1. The detail pane shows the conversation's latest tracked task.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from quart import Blueprint, flash, redirect, request, url_for
from tortoise.expressions import Q

from hub.core.agents.registry import agents_by_id, list_agents, public_status
from hub.core.errors import HubError
from hub.core.store.models import Interaction, Message
from hub.core.store.paging import BadCursor, Page, position
from hub.core.work.conversations import create_conversation, get_conversation, list_conversations
from hub.core.work.interactions import display_names
from hub.core.work.messages import MESSAGE_ORDER, list_messages, post_message
from hub.core.work.tasks import list_tasks
from hub.core.work.views import message_view
from hub.host.templates import render_template
from hub.web.pages.cards import safe_url
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.interactions import card_views
from hub.web.pages.paging import page_of
from hub.web.pages.session import current_user, login_required
from hub.web.pages.tasks import task_panel
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("conversations", __name__)

PAGE_SIZE = 100
THREAD_PAGE = 50
# A conversation left open keeps every message that arrives on its newest stretch, up to
# this many; past them a reload starts a fresh stretch.
THREAD_LIVE_LIMIT = 1000


@blueprint.get("/w/<workspace_id>/conversations")
@login_required
async def index(workspace_id: str) -> Any:
    return await _render_index(workspace_id, status=200)


@blueprint.post("/w/<workspace_id>/conversations")
@login_required
async def create(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    form = await request.form
    try:
        conversation = await create_conversation(
            frame.workspace.id,
            form.get("title", ""),
            form.getlist("agentIds"),
            by=f"user:{user.id}",
        )
    except HubError as error:
        return await _render_index(
            workspace_id, status=error.status, error=for_person(error), title=form.get("title", "")
        )
    return redirect(
        url_for(
            "pages.conversations.show",
            workspace_id=frame.workspace.id,
            conversation_id=conversation.id,
        )
    )


async def _render_index(
    workspace_id: str, *, status: int, error: dict[str, Any] | None = None, title: str = ""
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    agents = [a for a in await list_agents(frame.workspace.id) if public_status(a) != "revoked"]
    shown, paged = await page_of(
        lambda cursor: list_conversations(frame.workspace.id, limit=PAGE_SIZE, cursor=cursor)
    )
    html = await render_template(
        "pages/conversations.html",
        **frame.context(),
        conversations=shown.items,
        older=shown.next_cursor,
        paged=paged,
        agents=agents,
        names={a.id: a.name for a in agents},
        error=error,
        title=title,
    )
    return html, status


@blueprint.get("/w/<workspace_id>/conversations/<conversation_id>")
@login_required
async def show(workspace_id: str, conversation_id: str) -> Any:
    return await _render_thread(workspace_id, conversation_id, status=200)


@blueprint.post("/w/<workspace_id>/conversations/<conversation_id>/messages")
@login_required
async def send(workspace_id: str, conversation_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    form = await request.form
    track = form.get("track") == "on"
    try:
        posted = await post_message(
            frame.workspace.id,
            conversation_id,
            form.get("content", ""),
            by=f"user:{user.id}",
            target_agent_id=form.get("targetAgentId") or None,
            track_as_task=track,
        )
    except HubError as error:
        return await _render_thread(
            workspace_id,
            conversation_id,
            status=error.status,
            error=for_person(error),
            draft=form.get("content", ""),
            track=track,
        )
    if posted.task is not None:
        await flash(_("Sent, and tracked as a task."))
    return redirect(
        url_for(
            "pages.conversations.show",
            workspace_id=frame.workspace.id,
            conversation_id=conversation_id,
        )
    )


async def _render_thread(
    workspace_id: str,
    conversation_id: str,
    *,
    status: int,
    error: dict[str, Any] | None = None,
    draft: str = "",
    track: bool = False,
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    conversation = await get_conversation(frame.workspace.id, conversation_id)
    window = await _window(frame.workspace.id, conversation.id)
    messages = [message_view(m) for m in window.messages.items]
    authors = [m["author"].partition(":")[2] for m in messages if m["author"].startswith("agent:")]
    agents = await agents_by_id(frame.workspace.id, [*(conversation.agent_ids or []), *authors])
    people = await display_names({m["author"] for m in messages})
    for message in messages:
        message["authorName"] = _author_name(message["author"], agents, people)
        message["links"] = [
            {"name": str(a.get("name") or a.get("url") or ""), "url": safe_url(a.get("url"))}
            for a in message["attachments"]
            if isinstance(a, dict)
        ]
    interactions = await Interaction.filter(
        window.cards, workspace_id=frame.workspace.id, conversation_id=conversation.id
    ).order_by("created_at", "id")
    cards = await card_views(frame.workspace.id, interactions)
    thread = sorted(
        [
            *(("message", m["createdAt"], m) for m in messages),
            *(("card", c.interaction.created_at.isoformat(), c) for c in cards),
        ],
        key=lambda item: _sort_key(item[1]),
    )
    # The pane follows the conversation's latest piece of work, not a child step of it.
    recent = await list_tasks(frame.workspace.id, conversation_id=conversation.id, limit=50)
    tasks = [t for t in recent.items if t.parent_id is None]
    next_url = url_for(
        "pages.conversations.show", workspace_id=frame.workspace.id, conversation_id=conversation.id
    )
    html = await render_template(
        "pages/conversation.html",
        **frame.context(),
        conversation=conversation,
        members=[agents[i] for i in conversation.agent_ids or [] if i in agents],
        thread=thread,
        task=await task_panel(frame.workspace.id, tasks[0].id) if tasks else None,
        error=error,
        draft=draft,
        track=track,
        next_url=next_url,
        earlier=window.earlier,
        paged=window.paged,
        live_url=window.live_url(next_url),
    )
    return html, status


@dataclass(frozen=True)
class ThreadWindow:
    """The stretch of a conversation a page shows: its messages, the cards asked in the same
    stretch of time, and the cursor of the earlier stretch."""

    messages: Page[Message]
    cards: Q
    earlier: str | None
    paged: bool  # an earlier stretch alone, reached by "Load earlier"
    anchor: str | None  # the newest stretch kept as it is while new messages arrive

    def live_url(self, page_url: str) -> str:
        """What a live redraw fetches: an earlier stretch does not change; the newest one
        keeps its oldest message and gains what arrives, so that the stretches loaded above
        it still meet it."""
        if self.paged or not self.anchor:
            return request.full_path if self.paged else page_url
        return f"{page_url}?{urlencode({'from': self.anchor})}"


async def _window(workspace_id: str, conversation_id: str) -> ThreadWindow:
    # A cursor that no longer reads opens the conversation at its newest messages: a page
    # has nobody to hand a 400 to.
    cursor = request.args.get("cursor") or None
    anchor = request.args.get("from") or None
    try:
        if cursor:
            messages = await list_messages(
                workspace_id, conversation_id, limit=THREAD_PAGE, cursor=cursor
            )
            upper = position(MESSAGE_ORDER, cursor)[0]
        elif anchor:
            messages = await list_messages(
                workspace_id, conversation_id, limit=THREAD_LIVE_LIMIT, down_to=anchor
            )
            upper = None
        else:
            messages = await list_messages(workspace_id, conversation_id, limit=THREAD_PAGE)
            upper = None
    except BadCursor:
        cursor = anchor = upper = None
        messages = await list_messages(workspace_id, conversation_id, limit=THREAD_PAGE)
    earlier = anchor if anchor and messages.next_cursor is None else messages.next_cursor
    cards = Q()
    if earlier and messages.items:
        cards &= Q(created_at__gte=messages.items[0].created_at)
    if upper is not None:
        cards &= Q(created_at__lt=upper)
    return ThreadWindow(
        messages, cards, earlier, cursor is not None, anchor or messages.next_cursor
    )


def _sort_key(moment: str) -> str:
    # Messages carry ISO strings, cards datetimes: one comparable UTC form for both.
    return datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone(UTC).isoformat()


def _author_name(author: str, agents: dict[str, Any], people: dict[str, str]) -> str:
    kind, _sep, ident = author.partition(":")
    if kind == "agent" and ident in agents:
        return str(agents[ident].name)
    if kind == "user":
        return people.get(author, _("Someone"))
    return _("System")
