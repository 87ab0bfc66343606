"""Conversations and a person's messages: routing to the agent, tracking as a task."""

from __future__ import annotations

import pytest

from hub.core.errors import Conflict, InvalidInput, NotFound
from hub.core.log.events import events_after, last_sequence
from hub.core.store.models import Task, Workspace
from hub.core.work.conversations import create_conversation, get_conversation, list_conversations
from hub.core.work.messages import list_messages, post_message
from tests.core.agent_reports import make_agent, revoked_agent

ME = "user:usr_me"


async def test_a_conversation_is_logged_and_listed(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace.id, "  Site   rebuild ", [agent.id], by=ME)
    assert conversation.title == "Site rebuild"
    assert conversation.agent_ids == [agent.id]
    [event] = await events_after(workspace.id, 0)
    assert event.type == "conversation.created" and event.actor == ME
    assert [c.id for c in (await list_conversations(workspace.id)).items] == [conversation.id]


async def test_bad_conversations_are_refused_and_change_nothing(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    foreign = await make_agent(theirs)
    retired = await revoked_agent(mine)
    with pytest.raises(NotFound) as not_found:
        await create_conversation(mine.id, "x", [foreign.id], by=ME)
    assert not_found.value.code == "agent_not_found"
    with pytest.raises(Conflict) as revoked:
        await create_conversation(mine.id, "x", [retired.id], by=ME)
    assert revoked.value.code == "agent_revoked"
    with pytest.raises(InvalidInput) as empty:
        await create_conversation(mine.id, "   ", [], by=ME)
    assert empty.value.code == "title_required"
    assert await last_sequence(mine.id) == 0


async def test_a_message_reaches_the_only_agent(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace.id, "Chat", [agent.id], by=ME)
    posted = await post_message(workspace.id, conversation.id, "Hello there", by=ME)
    assert posted.task is None
    assert posted.message.target_agent_id == agent.id
    [delivered] = await events_after(workspace.id, 0, recipient_agent_id=agent.id)
    assert delivered.type == "message.created"
    assert delivered.payload["targetAgentId"] == agent.id
    assert delivered.payload["content"] == "Hello there"
    assert [m.id for m in (await list_messages(workspace.id, conversation.id)).items] == [
        posted.message.id
    ]


async def test_track_as_task_creates_the_task_first(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace.id, "Chat", [agent.id], by=ME)
    posted = await post_message(
        workspace.id,
        conversation.id,
        "Tidy the project's dependencies\nand write a plan",
        by=ME,
        target_agent_id=agent.id,
        track_as_task=True,
    )
    assert posted.task is not None
    assert posted.task.title == "Tidy the project's dependencies"
    assert posted.task.status == "queued" and posted.task.conversation_id == conversation.id
    assert posted.message.task_id == posted.task.id
    routed = await events_after(workspace.id, 0, recipient_agent_id=agent.id)
    assert [e.type for e in routed] == ["task.created", "message.created"]
    assert routed[1].payload["taskId"] == posted.task.id
    assert posted.view()["task"]["id"] == posted.task.id


async def test_messages_need_a_valid_target(make_user) -> None:  # type: ignore[no-untyped-def]
    _, workspace = await make_user()
    first, second = await make_agent(workspace, "a"), await make_agent(workspace, "b")
    outsider = await make_agent(workspace, "c")
    both = await create_conversation(workspace.id, "Both", [first.id, second.id], by=ME)
    alone = await create_conversation(workspace.id, "Notes", [], by=ME)
    before = await last_sequence(workspace.id)
    with pytest.raises(InvalidInput) as no_target:
        await post_message(workspace.id, both.id, "hi", by=ME)
    assert no_target.value.code == "target_agent_required"
    with pytest.raises(InvalidInput) as not_member:
        await post_message(workspace.id, both.id, "hi", by=ME, target_agent_id=outsider.id)
    assert not_member.value.code == "agent_not_in_conversation"
    with pytest.raises(InvalidInput) as empty:
        await post_message(workspace.id, both.id, "  ", by=ME, target_agent_id=first.id)
    assert empty.value.code == "content_required"
    with pytest.raises(InvalidInput):
        await post_message(workspace.id, alone.id, "track me", by=ME, track_as_task=True)
    assert await last_sequence(workspace.id) == before
    assert await Task.all().count() == 0
    # A conversation without agents keeps a message as a note, delivered to no one.
    note = await post_message(workspace.id, alone.id, "remember the milk", by=ME)
    assert note.message.target_agent_id is None


async def test_a_revoked_member_takes_no_more_messages(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace.id, "Chat", [agent.id], by=ME)
    agent.revoked_at = agent.created_at
    await agent.save()
    with pytest.raises(Conflict) as revoked:
        await post_message(workspace.id, conversation.id, "still there?", by=ME)
    assert revoked.value.code == "agent_revoked"


async def test_another_workspace_conversation_is_not_found(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    conversation = await create_conversation(theirs.id, "Private", [], by=ME)
    with pytest.raises(NotFound):
        await get_conversation(mine.id, conversation.id)
    with pytest.raises(NotFound):
        await post_message(mine.id, conversation.id, "peek", by=ME)
    with pytest.raises(NotFound):
        await list_messages(mine.id, conversation.id)
    assert await last_sequence(mine.id) == 0


async def test_a_repeated_request_posts_once(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace.id, "Chat", [agent.id], by=ME)
    first = await post_message(
        workspace.id, conversation.id, "Do it", by=ME, track_as_task=True, idempotency_key="k1"
    )
    again = await post_message(
        workspace.id, conversation.id, "Do it", by=ME, track_as_task=True, idempotency_key="k1"
    )
    assert again.message.id == first.message.id
    assert again.task is not None and first.task is not None and again.task.id == first.task.id
    assert await last_sequence(workspace.id) == 3  # conversation, task, message
    # The same key from another person is another request.
    other = await post_message(
        workspace.id, conversation.id, "Do it", by="user:usr_other", idempotency_key="k1"
    )
    assert other.message.id != first.message.id


async def test_messages_read_oldest_first_and_keep_the_latest(workspace: Workspace) -> None:
    conversation = await create_conversation(workspace.id, "Notes", [], by=ME)
    for n in range(5):
        await post_message(workspace.id, conversation.id, f"note {n}", by=ME)
    latest = (await list_messages(workspace.id, conversation.id, limit=3)).items
    assert [m.content for m in latest] == ["note 2", "note 3", "note 4"]
