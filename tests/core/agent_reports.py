"""Shared set-up for the person-side service tests: agents and an agent's own reports."""

from __future__ import annotations

from typing import Any

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Agent, AgentStatus, Membership, Role, User, Workspace
from tests.core.scenario import make_agent

__all__ = ["agent_asks", "agent_reports", "join", "make_agent", "revoked_agent"]


async def join(workspace_id: str, actor: str, role: Role = Role.MEMBER) -> None:
    """Make ``actor`` ("user:<id>") a member of the workspace (only members answer cards);
    nothing changes if they are one already."""
    user_id = actor.partition(":")[2]
    user, _ = await User.get_or_create(
        id=user_id, defaults={"email": f"{user_id}@example.com", "display_name": user_id}
    )
    await Membership.get_or_create(
        workspace_id=workspace_id,
        user=user,
        defaults={"id": new_id("membership"), "role": role},
    )


async def revoked_agent(workspace: Workspace) -> Agent:
    agent = await make_agent(workspace, "retired")
    agent.status = AgentStatus.REVOKED
    await agent.save()
    return agent


async def agent_reports(agent: Agent, type: str, payload: dict[str, Any], **kwargs: Any) -> int:
    result = await append_event(
        agent.workspace_id, type, payload, actor=f"agent:{agent.id}", **kwargs
    )
    return result.sequence


async def agent_asks(agent: Agent, task_id: str | None, **card: Any) -> str:
    """The agent accepts ``task_id`` (if queued) and asks a card; returns the card's id."""
    interaction_id = new_id("interaction")
    card = {"id": interaction_id, "type": "approval", "title": "Run the migration?", **card}
    await agent_reports(agent, "interaction.requested", {"interaction": card}, task_id=task_id)
    return interaction_id
