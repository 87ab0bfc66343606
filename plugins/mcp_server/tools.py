"""The MCP server of one hub agent: its instructions, tools and resources.

The same server is built for ``lineup mcp`` on stdio and for each credential on the hub's
``/mcp/``: the asking tools (``asking.py``) and the work tools and resources (``work.py``),
bound to one ``Toolbox``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from plugins.mcp_server.asking import add_asking_tools
from plugins.mcp_server.toolbox import Toolbox
from plugins.mcp_server.work import add_work_tools

INSTRUCTIONS = """\
You are connected to LineUp Hub, where the person supervising you sees your work and
answers your questions on the web, by email or in Telegram. Before anything risky or
irreversible (deleting data, deploying, spending money, running migrations), call
request_approval and obey the answer: only `approved: true` means go ahead. Use ask_choice
or ask_input when you need a decision or a value only the person has, and request_review
to have a result checked. Asking tools wait for the answer; if they return
`status: pending`, continue with something else and call get_decision with the handle later.
For longer work, start_task, report_progress as you go, and finish_task at the end, so the
person can follow along."""


def build_server(box: Toolbox, name: str = "lineup") -> MCPServer:
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")
    add_asking_tools(server, box)
    add_work_tools(server, box)
    return server


__all__ = ["INSTRUCTIONS", "Toolbox", "build_server"]
