"""A whole task's life through the core services, used by several tests."""

from __future__ import annotations

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Agent, AgentStatus, User, Workspace


async def make_agent(workspace: Workspace, name: str = "builder") -> Agent:
    return await Agent.create(
        id=new_id("agent"),
        workspace=workspace,
        name=name,
        status=AgentStatus.ONLINE,
        runtime="test",
    )


async def started_task(workspace: Workspace, agent: Agent, user: User) -> str:
    """A task ``user`` gave ``agent``, which took it: running."""
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "Deploy", "targetAgentId": agent.id},
        actor=f"user:{user.id}",
    )
    await append_event(
        workspace.id, "task.accepted", {"taskId": task_id}, actor=f"agent:{agent.id}"
    )
    return task_id


async def run_scenario(workspace: Workspace, agent: Agent) -> dict[str, str]:
    """Conversation, task, progress, child task, approval answered, artifact, success."""
    ws, by_agent = workspace.id, f"agent:{agent.id}"
    conversation_id, task_id = new_id("conversation"), new_id("task")
    child_id, interaction_id = new_id("task"), new_id("interaction")
    await append_event(
        ws,
        "conversation.created",
        {"conversationId": conversation_id, "title": "Site rebuild", "agentIds": [agent.id]},
        actor="user:usr_x",
    )
    await append_event(
        ws,
        "message.created",
        {
            "messageId": new_id("message"),
            "conversationId": conversation_id,
            "content": "Tidy the dependencies",
            "targetAgentId": agent.id,
        },
        actor="user:usr_x",
        conversation_id=conversation_id,
    )
    await append_event(
        ws,
        "task.created",
        {
            "taskId": task_id,
            "title": "Tidy dependencies",
            "targetAgentId": agent.id,
            "conversationId": conversation_id,
        },
        actor="user:usr_x",
    )
    await append_event(ws, "task.accepted", {"taskId": task_id}, actor=by_agent)
    await append_event(
        ws,
        "task.status_changed",
        {"taskId": task_id, "status": "running", "progress": 30, "summary": "scanning"},
        actor=by_agent,
    )
    await append_event(
        ws,
        "task.child_created",
        {"taskId": child_id, "parentTaskId": task_id, "title": "Scan repo", "status": "running"},
        actor=by_agent,
    )
    await append_event(
        ws,
        "interaction.requested",
        {
            "interaction": {
                "id": interaction_id,
                "type": "approval",
                "title": "Install 3 dev dependencies?",
                "risk": "high",
            }
        },
        actor=by_agent,
        task_id=task_id,
    )
    await append_event(
        ws,
        "interaction.resolved",
        {
            "interactionId": interaction_id,
            "response": {"optionId": "approve"},
            "respondedBy": "user:usr_x",
            "via": "web",
        },
        actor="user:usr_x",
    )
    await append_event(
        ws,
        "artifact.created",
        {
            "artifactId": new_id("artifact"),
            "taskId": task_id,
            "name": "plan.md",
            "url": "https://example.com/plan.md",
        },
        actor=by_agent,
    )
    await append_event(
        ws,
        "message.created",
        {"messageId": new_id("message"), "conversationId": conversation_id, "content": "Done."},
        actor=by_agent,
    )
    await append_event(
        ws, "task.status_changed", {"taskId": child_id, "status": "succeeded"}, actor=by_agent
    )
    await append_event(
        ws,
        "task.status_changed",
        {"taskId": task_id, "status": "succeeded", "progress": 100},
        actor=by_agent,
    )
    return {"conversation": conversation_id, "task": task_id, "interaction": interaction_id}
