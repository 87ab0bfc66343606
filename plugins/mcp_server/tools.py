"""The MCP server of one hub agent: its instructions, tools and resources.

The same server is built for ``lineup mcp`` on stdio and for each credential on the hub's
``/mcp/``: the asking tools (``asking.py``), get_decision (``answers.py``), the work tools
(``work.py``) and the resources (``resources.py``), all reaching one ``Toolbox``.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from mcp.server.mcpserver import MCPServer, RequestStateSecurity

from plugins.mcp_server.answers import get_decision
from plugins.mcp_server.asking import ASKING_TOOLS
from plugins.mcp_server.batches import request_approvals
from plugins.mcp_server.resources import add_resources
from plugins.mcp_server.tasks import TasksExtension, listen_for_tasks
from plugins.mcp_server.toolbox import Toolbox
from plugins.mcp_server.wire_rules import WireRules
from plugins.mcp_server.work import WORK_TOOLS

INSTRUCTIONS = """\
You are connected to LineUp Hub, where the person supervising you sees your work and
answers your questions on the web, by email or in Telegram. Before anything risky or
irreversible (deleting data, deploying, spending money, running migrations), call
request_approval and obey the answer: only `approved: true` means go ahead. Use ask_choice
or ask_input when you need a decision or a value only the person has, and request_review
to have a result checked; request_approvals asks for several approvals of one task at once.
Asking tools wait for the answer; if they return `status: pending`, continue with something
else and call get_decision with the handle later.
For longer work, start_task, report_progress as you go, and finish_task at the end, so the
person can follow along."""


ASKING = (*ASKING_TOOLS, request_approvals)
TOOLS = (*ASKING, get_decision, *WORK_TOOLS)


def build_server(box: Toolbox, name: str = "lineup") -> MCPServer[Toolbox]:
    server = MCPServer(
        name,
        version=version("lineup-hub"),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=box.lifespan,
        extensions=[TasksExtension(frozenset(t.__name__ for t in ASKING))],
        request_state_security=_request_state_security(box),
    )
    server.middleware.extend([WireRules(server), listen_for_tasks])
    for tool in TOOLS:
        server.add_tool(tool, description=_description(tool))
    add_resources(server, box)
    return server


# The terminal may take its time over a form; its answer comes back with the request state.
REQUEST_STATE_TTL_S = 24 * 3600


def _request_state_security(box: Toolbox) -> RequestStateSecurity:
    """Sealing for the request state of 2026-07-28 input-required rounds, keyed by the
    agent's credential: a server made anew for the same agent (an idle one opened again,
    a restarted hub) still reads the state the client echoes. Call once the agent has its
    credential (after pairing)."""
    credential = box.agent.credential() or ""
    key = hashlib.sha256(b"lineup-mcp-request-state\x00" + credential.encode()).digest()
    return RequestStateSecurity(keys=[key], ttl=REQUEST_STATE_TTL_S)


def _description(tool: Callable[..., Any]) -> str:
    # A tool's description is its docstring without the source's indentation: a model reads
    # the text alone, the same whichever Python (3.13 strips docstrings itself) serves it.
    return inspect.cleandoc(tool.__doc__ or "")


__all__ = ["INSTRUCTIONS", "Toolbox", "build_server"]
