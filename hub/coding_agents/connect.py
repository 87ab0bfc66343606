"""``lineup connect`` / ``lineup disconnect``: a coding agent's machine joins or leaves a hub.

Connecting pairs the machine as an agent with a one-time code (the SDK redeems it), keeps
the credential (``hub.coding_agents.credentials``), and merges the hub's hooks into the
CLI's own configuration: Claude Code's ``settings.json`` (a project's or the user's), or
Codex's ``hooks.json``, marked trusted. Running it again changes nothing; disconnecting
removes exactly the hooks it added.

The hooks wait ``wait_s`` for a person: the card expires then, and the CLI's own timeout
for the hook is a minute longer, so the hub's expiry (recorded as such) always answers
before the CLI gives up on the hook.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from hub.coding_agents import credentials

CLIS = {"claude-code": "Claude Code", "codex": "Codex"}
HOOK_TIMEOUT_MARGIN_S = 60


@dataclass(frozen=True)
class Target:
    """Where a CLI's hooks go: Claude Code's settings file, or a Codex home."""

    cli: str
    path: Path

    @classmethod
    def of(
        cls,
        cli: str,
        *,
        project: str | None = None,
        user: bool = False,
        codex_home: str | None = None,
    ) -> Target:
        if cli == "codex":
            home = codex_home or os.environ.get("CODEX_HOME") or str(Path.home() / ".codex")
            return cls(cli, Path(home).expanduser().resolve())
        if user:
            return cls(cli, Path.home() / ".claude" / "settings.json")
        folder = Path(project or os.getcwd()).expanduser().resolve()
        return cls(cli, folder / ".claude" / "settings.json")

    def install(self, command: str, wait_s: int) -> bool:
        timeout_s = wait_s + HOOK_TIMEOUT_MARGIN_S
        if self.cli == "codex":
            from hub.coding_agents import codex_home

            return codex_home.install(self.path, command, timeout_s)
        from hub.coding_agents import claude_settings

        return claude_settings.install(self.path, command, gate_timeout_s=timeout_s)

    def uninstall(self) -> bool:
        if self.cli == "codex":
            from hub.coding_agents import codex_home

            return codex_home.uninstall(self.path)
        from hub.coding_agents import claude_settings

        return claude_settings.uninstall(self.path)


async def pair(cli: str, hub: str, code: str) -> credentials.Connection:
    """Redeem ``code`` at ``hub`` as this machine's ``cli`` agent; raises the SDK's errors."""
    from hub.sdk import Agent

    agent = Agent(
        hub,
        pairing_code=code,
        name=f"{CLIS[cli]} on {socket.gethostname()}",
        profile=f"coding-agent-{cli}",
        capabilities=["coding-agent", cli],
    )
    try:
        await agent.start()
        credential = agent.credential()
        assert credential is not None
        return credentials.Connection(
            hub=agent.hub,
            credential=credential,
            agent_id=agent.agent_id or "",
            workspace_id=agent.workspace_id or "",
        )
    finally:
        await agent.close()
