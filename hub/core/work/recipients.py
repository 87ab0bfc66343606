"""Which agents a person may send work to.

Messages and tasks are addressed to an agent of the same workspace (spec §11: nothing is
delivered across workspaces). A revoked agent can never receive anything again, so work
addressed to it is refused up front instead of waiting in the log forever. An agent that is
offline or not yet confirmed may be addressed: its work waits in the log and is replayed
when it connects.
"""

from __future__ import annotations

from collections.abc import Iterable

from hub.core.agents.registry import get_agent
from hub.core.errors import Conflict
from hub.core.store.models import Agent, AgentStatus


async def deliverable_agent(workspace_id: str, agent_id: str) -> Agent:
    agent = await get_agent(workspace_id, agent_id)
    if agent.status == AgentStatus.REVOKED or agent.revoked_at is not None:
        raise Conflict(
            f"Agent {agent.name} ({agent.id}) was revoked and takes no more work.",
            code="agent_revoked",
            hint="Pick another agent, or connect this one again with a new pairing code.",
        )
    return agent


async def deliverable_agents(workspace_id: str, agent_ids: Iterable[str]) -> list[Agent]:
    agents: list[Agent] = []
    for agent_id in dict.fromkeys(agent_ids):  # keep order, drop repeats
        agents.append(await deliverable_agent(workspace_id, agent_id))
    return agents
