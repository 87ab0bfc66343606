"""What an agent may write over LAP: its own tasks, its own conversations, and a message
about a task that goes to the task's conversation, one opened for it if it had none."""

from __future__ import annotations

from typing import Any

from hub.core.ids import new_id
from hub.core.log.events import append_event, events_after, rebuild_projections
from hub.core.store.models import (
    Artifact,
    Conversation,
    Event,
    Interaction,
    Message,
    Task,
    Workspace,
)
from hub.core.work.conversations import create_conversation
from hub.core.work.tasks import create_task, task_detail
from hub.testing import HubProcess
from tests.plugins.lap_client import RawAgent, raw_agent
from tests.plugins.test_lap_gateway import assign_task, paired

OWNER = "user:usr_owner"


async def refused(agent: RawAgent, kind: str, payload: dict[str, Any], **fields: Any) -> str:
    """Send a frame that must be refused as forbidden; returns the error's code."""
    answer = await agent.call(kind, payload, **fields)
    assert answer["type"] == "error", answer
    assert answer["payload"]["hint"], answer
    return str(answer["payload"]["code"])


async def test_an_agent_writes_nothing_to_another_agents_task_or_conversation(
    hub: HubProcess, workspace: Workspace
) -> None:
    mine, credential = await paired(hub, workspace, "mine")
    theirs, _ = await paired(hub, workspace, "theirs")
    conversation = await create_conversation(workspace.id, "Theirs", [theirs], by=OWNER)
    task = await create_task(
        workspace.id,
        "Their task",
        by=OWNER,
        target_agent_id=theirs,
        conversation_id=conversation.id,
    )
    await append_event(workspace.id, "task.accepted", {"taskId": task.id}, actor=f"agent:{theirs}")
    before = (await events_after(workspace.id, 0))[-1].sequence

    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        card = {"type": "approval", "title": "May I?"}
        codes = [
            await refused(agent, "message.create", {"content": "x", "taskId": task.id}),
            await refused(
                agent,
                "message.create",
                {"content": "x", "taskId": task.id, "conversationId": conversation.id},
            ),
            await refused(agent, "message.create", {"content": "x"}, taskId=task.id),
            await refused(
                agent, "message.create", {"content": "x"}, conversationId=conversation.id
            ),
            await refused(agent, "task.status_changed", {"taskId": task.id, "status": "succeeded"}),
            await refused(
                agent, "artifact.created", {"taskId": task.id, "name": "a", "url": "https://a.b"}
            ),
            await refused(agent, "task.child_created", {"parentTaskId": task.id, "title": "c"}),
            await refused(agent, "interaction.requested", {"interaction": card}, taskId=task.id),
            await refused(
                agent,
                "interaction.requested",
                {"interaction": card},
                conversationId=conversation.id,
            ),
            await refused(
                agent, "task.created", {"title": "sneak in", "conversationId": conversation.id}
            ),
        ]
        assert (
            codes
            == ["task_not_yours"] * 3
            + ["conversation_not_yours"]
            + ["task_not_yours"] * 4
            + ["conversation_not_yours"] * 2
        )
        # Its own task in the same workspace still takes its reports.
        own = await agent.call("task.created", {"title": "my own"})
        assert own["type"] == "ack", own

    stored = [e for e in await events_after(workspace.id, before) if e.actor == f"agent:{mine}"]
    assert "message.created" not in {e.type for e in stored}
    assert [e.type for e in stored if not e.type.startswith("agent.")] == ["task.created"]
    assert await Message.filter(conversation_id=conversation.id).count() == 0
    assert await Interaction.filter(workspace_id=workspace.id).count() == 0
    assert await Artifact.filter(workspace_id=workspace.id).count() == 0
    assert (await Task.get(id=task.id)).status == "running"
    assert await Task.filter(parent_id=task.id).count() == 0


async def test_a_message_naming_only_its_task_goes_to_the_tasks_conversation(
    hub: HubProcess, workspace: Workspace
) -> None:
    agent_id, credential = await paired(hub, workspace)
    task = await create_task(workspace.id, "Summarise the logs", by=OWNER, target_agent_id=agent_id)
    assert task.conversation_id is None
    tracked = await create_conversation(workspace.id, "Tracked", [agent_id], by=OWNER)
    other = await create_task(
        workspace.id, "In a thread", by=OWNER, target_agent_id=agent_id, conversation_id=tracked.id
    )

    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        for task_id in (task.id, other.id):
            assert (await agent.call("task.accepted", {"taskId": task_id}))["type"] == "ack"
        result = await agent.call(
            "message.create", {"content": "3 errors, all fixed"}, taskId=task.id
        )
        assert result["type"] == "ack", result
        again = await agent.call("message.create", {"content": "and a note", "taskId": task.id})
        assert again["type"] == "ack", again
        threaded = await agent.call("message.create", {"content": "done"}, taskId=other.id)
        assert threaded["type"] == "ack", threaded
        nowhere = await agent.call("message.create", {"content": "to whom?"})
        assert nowhere["payload"]["code"] == "conversation_required"

    task = await Task.get(id=task.id)
    assert task.conversation_id is not None
    opened = await Conversation.get(id=task.conversation_id)
    assert (opened.title, opened.agent_ids, opened.created_by) == (
        "Summarise the logs",
        [agent_id],
        OWNER,
    )
    messages = await Message.filter(conversation_id=opened.id).order_by("created_at", "id")
    assert [(m.content, m.task_id) for m in messages] == [
        ("3 errors, all fixed", task.id),
        ("and a note", task.id),
    ]
    assert [m.content for m in await Message.filter(conversation_id=tracked.id)] == ["done"]
    # The task's page shows its messages.
    detail = await task_detail(workspace.id, task.id)
    assert [m["content"] for m in detail["messages"]] == ["3 errors, all fixed", "and a note"]
    event = next(e for e in await events_after(workspace.id, 0) if e.id == result["payload"]["id"])
    assert (event.conversation_id, event.task_id) == (opened.id, task.id)

    # The log alone opens the same conversation again.
    await rebuild_projections([workspace.id])
    assert (await Task.get(id=task.id)).conversation_id == opened.id
    assert await Message.filter(conversation_id=opened.id).count() == 2
    assert (await Conversation.get(id=opened.id)).title == "Summarise the logs"


async def test_a_task_an_agent_opens_for_itself_is_not_assigned_back_to_it(
    hub: HubProcess, workspace: Workspace
) -> None:
    """``task.assigned`` is a task someone else gave the agent: its own, reported with
    ``task.created``, never comes back (an SDK agent would start its own task again as if a
    person had assigned it), live or in a replay, even from a log whose rows address it."""
    agent_id, credential = await paired(hub, workspace)
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        own = await agent.call("task.created", {"title": "my own"})
        assert own["type"] == "ack", own
        assigned = await assign_task(workspace, agent_id, "from a person")
        live = [f for f in await agent.quiet(1.0) if f["type"] == "task.assigned"]
        assert [f["payload"]["task"]["id"] for f in live] == [assigned]

    # A log written before this rule addressed the agent's own task to it.
    older = await append_event(
        workspace.id,
        "task.created",
        {"taskId": new_id("task"), "title": "older own", "targetAgentId": agent_id},
        actor=f"agent:{agent_id}",
    )
    await Event.filter(pk_id=older.event.pk_id).update(recipient_agent_id=agent_id)
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello(lastSequence=0)
        replayed = [f for f in await agent.quiet(1.0) if f["type"] == "task.assigned"]
        assert [f["payload"]["task"]["id"] for f in replayed] == [assigned]
