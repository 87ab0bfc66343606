"""One hub agent as the MCP tools see it, and what the tools share.

Every tool is a thin translation: arguments become an interaction card or an uplink sent
through the SDK (kept and resent until the hub acknowledges it), and the hub's refusal
becomes a tool error the model can read (what went wrong and what to do instead).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hub.sdk import Agent, HubRefused
from plugins.mcp_server.decisions import PROGRESS_EVERY_S, Decisions
from plugins.mcp_server.task_board import TaskBoard
from plugins.mcp_server.worklog import TrackedTask, Worklog


@dataclass
class Toolbox:
    """One hub agent as the tools see it."""

    agent: Agent
    decisions: Decisions
    worklog: Worklog
    tasks: TaskBoard
    wait_s: float
    # The hub's address as people open it (for a card's page), when known.
    public_url: str = ""

    @classmethod
    def for_agent(
        cls,
        agent: Agent,
        wait_s: float,
        progress_every_s: float = PROGRESS_EVERY_S,
        public_url: str = "",
    ) -> Toolbox:
        """Call before the agent starts, so no downlink passes before the handlers exist."""
        decisions = Decisions(agent, progress_every_s)
        tasks = TaskBoard(decisions)
        return cls(agent, decisions, Worklog(agent), tasks, wait_s, public_url.rstrip("/"))

    def card_page(self, handle: str) -> str:
        """The page of the card ``handle`` on the hub, where a person answers it."""
        return f"{self.public_url}/w/{self.agent.workspace_id}/interactions/{handle}"

    @asynccontextmanager
    async def lifespan(self, _server: object) -> AsyncIterator[Toolbox]:
        """The MCP server's lifespan: its state, which each tool call finds in its Context,
        is this toolbox. Tasks still waiting stop being followed when it ends (their cards
        stay open in the hub, and a restarted server finds them again)."""
        try:
            yield self
        finally:
            await self.tasks.close()


# The hub serves many agents in one process, each with its own server: a tool finds its
# agent through the call's Context, never through anything the servers share.
ToolContext = Context[Toolbox, Any]


def toolbox_of(ctx: ToolContext) -> Toolbox:
    """The toolbox of the server that took this call."""
    return ctx.request_context.lifespan_context


TaskId = Annotated[
    str | None,
    Field(None, description="The task this is about (from start_task or the open-tasks resource)."),
]


def task_of(box: Toolbox, task_id: str) -> TrackedTask:
    """The task ``task_id`` as far as this server knows it. One it has not seen (started
    before a restart, say) is taken on trust: the hub, which knows every task, refuses a
    report on a task that is not this agent's, and that refusal reaches the model."""
    task = box.worklog.tasks.get(task_id)
    if task is None:
        task = TrackedTask(task_id, "", "", "unknown", None, "unknown")
        box.worklog.tasks[task_id] = task
    return task


async def checked(step: Any) -> Any:
    """Await ``step``; the hub's refusal becomes a tool error the model can act on."""
    try:
        return await step
    except HubRefused as error:
        raise ToolError(f"{error.code}: {error.message} {error.hint}".strip()) from None
