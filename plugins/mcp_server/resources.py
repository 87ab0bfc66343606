"""The resources an MCP client reads: the agent's open tasks and its unanswered requests.

The SDK hands a resource with a fixed URI no Context, so each reader is bound to its own
server's toolbox when the server is built.
"""

from __future__ import annotations

import json
from functools import partial

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource

from plugins.mcp_server.toolbox import Toolbox


def open_tasks(box: Toolbox) -> str:
    return json.dumps([task.wire() for task in box.worklog.open_tasks()])


def pending_interactions(box: Toolbox) -> str:
    return json.dumps([asked.summary() for asked in box.decisions.pending.values()])


def add_resources(server: MCPServer[Toolbox], box: Toolbox) -> None:
    server.add_resource(
        FunctionResource.from_function(
            partial(open_tasks, box),
            "lineup://tasks/open",
            name="open-tasks",
            description="Tasks this agent is working on or was assigned and has not finished.",
            mime_type="application/json",
        )
    )
    server.add_resource(
        FunctionResource.from_function(
            partial(pending_interactions, box),
            "lineup://interactions/pending",
            name="pending-interactions",
            description="Requests this agent made that nobody has answered yet (their handles).",
            mime_type="application/json",
        )
    )
