"""``lineup mcp``: the tools over stdio, as one SDK agent connected to a hub.

The MCP client (Claude Code, Codex, Cursor, ...) starts this process and speaks MCP on its
stdin and stdout, so nothing else may write to stdout: logs go to stderr. The agent is
online from start to exit. Its credential and position live in the SDK's state file
(profile ``mcp``), so only the very first start needs ``--pair``; a configuration that
keeps passing the used code still works, because a stored credential is tried first.
"""

from __future__ import annotations

from hub.sdk import Agent
from plugins.mcp_server.tools import Toolbox, build_server


async def serve_stdio(agent: Agent, wait_s: float) -> None:
    """Connect ``agent``, serve MCP on stdio until the client closes it, disconnect."""
    box = Toolbox.for_agent(agent, wait_s, public_url=agent.hub)
    await agent.start()
    try:
        # Built once the agent is connected: a first start pairs, and the server's request
        # state is sealed under the credential pairing gives.
        await build_server(box).run_stdio_async()
    finally:
        await agent.close()
