"""Where the SDK's defaults answer differently from the MCP specification, put right.

* An unknown tool or prompt is a protocol error, ``-32602`` (Invalid params), in every
  revision; the SDK answers an unknown tool with a tool result marked ``isError`` and an
  unknown prompt with an internal error and a traceback in the log.
* ``server/discover`` (2026-07-28) and ``initialize`` (the handshake revisions) must claim
  the same capabilities. The SDK derives the two differently: on discover it claims change
  notifications for every list and resource subscriptions because ``subscriptions/listen``
  is served. This server's lists never change and it offers no resource subscriptions
  (``subscriptions/listen`` serves task status, see ``tasks.py``), so discover answers what
  the handshake answers.

Each rule is a middleware of the server (``MCPServer.middleware``): it sees the method and
the raw params before the SDK does, and the result (as it goes on the wire) after.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS


class WireRules:
    """The middleware putting this module's rules in place on ``server``."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/call":
            await self._known("tool", {t.name for t in await self.server.list_tools()}, ctx)
        elif ctx.method == "prompts/get":
            await self._known("prompt", {p.name for p in await self.server.list_prompts()}, ctx)
        result = await call_next(ctx)
        if ctx.method == "server/discover" and isinstance(result, dict):
            _as_the_handshake_claims(result.get("capabilities") or {})
        return result

    @staticmethod
    async def _known(kind: str, names: set[str], ctx: ServerRequestContext[Any, Any]) -> None:
        name = (ctx.params or {}).get("name")
        if isinstance(name, str) and name not in names:
            raise MCPError(INVALID_PARAMS, f"Unknown {kind}: {name}", {"name": name})


def _as_the_handshake_claims(capabilities: dict[str, Any]) -> None:
    """Make the wire ``capabilities`` of a discover result claim what ``initialize`` does:
    no list changes, no resource subscriptions."""
    for listed in ("tools", "prompts", "resources"):
        if isinstance(capabilities.get(listed), dict):
            capabilities[listed]["listChanged"] = False
    if isinstance(capabilities.get("resources"), dict):
        capabilities["resources"]["subscribe"] = False
