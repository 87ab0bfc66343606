"""A machine connected to a live hub the way a person connects it, and its hook command.

``lineup connect`` runs as a person runs it (its own process, an isolated HOME), and each
hook event goes through the real ``lineup-hook`` command with the JSON on stdin, as the
CLIs run it; the hub is a real ``lineup serve`` process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hub.testing import eventually
from tests.sdk.live import LiveHub, live_hub

BIN = Path(sys.executable).parent
HOOK_BOUND_S = 90.0


@dataclass
class HookRun:
    output: dict[str, Any] | None
    stderr: str
    returncode: int


@dataclass
class Machine:
    """An agent's machine: its HOME, its project, and the environment its hooks run in."""

    home: Path
    project: Path
    hub: LiveHub
    env: dict[str, str] = field(default_factory=dict)
    agent_id: str = ""

    def lineup(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(BIN / "lineup"), *args],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def event(self, name: str, session: str = "sess-1", **fields: Any) -> dict[str, Any]:
        """A hook event's JSON as Claude Code gives it."""
        return {
            "session_id": session,
            "transcript_path": str(self.home / ".claude" / "projects" / f"{session}.jsonl"),
            "cwd": str(self.project),
            "hook_event_name": name,
            "permission_mode": "default",
            **fields,
        }

    async def hook(
        self, event: dict[str, Any], *, cli: str = "claude-code", wait: int = 60, **env: str
    ) -> HookRun:
        process = await self.start_hook(event, cli=cli, wait=wait, **env)
        return await finished(process)

    async def start_hook(
        self, event: dict[str, Any], *, cli: str = "claude-code", wait: int = 60, **env: str
    ) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            str(BIN / "lineup-hook"),
            cli,
            "--wait",
            str(wait),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**self.env, **env},
            cwd=self.project,
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(event).encode())
        await process.stdin.drain()
        process.stdin.close()
        return process

    async def pending_card(self, title_part: str = "") -> dict[str, Any]:
        """The one card this machine's agent is waiting on, once the hub shows it."""

        async def shown() -> dict[str, Any] | None:
            inbox = await self.hub.api("GET", "/inbox")
            for item in inbox["waitingForMe"]:
                interaction = item["interaction"]
                if title_part in str(interaction["card"].get("title", "")):
                    return dict(interaction)
            return None

        return dict(await eventually(shown, within=30))


async def finished(process: asyncio.subprocess.Process) -> HookRun:
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), HOOK_BOUND_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError("lineup-hook did not finish in time") from None
    text = stdout.decode().strip()
    return HookRun(json.loads(text) if text else None, stderr.decode(), process.returncode or 0)


@asynccontextmanager
async def connected_machine(
    database_url: str, root: Path, *, cli: str = "claude-code", **hub_env: str
) -> AsyncIterator[Machine]:
    """A live hub, and a machine whose ``cli`` was connected to it with a pairing code."""
    async with live_hub(database_url, root / "hub", **hub_env) as hub:
        home = root / "home"
        project = root / "work" / "shop"
        project.mkdir(parents=True)
        home.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LINEUP_AGENT_HOME": str(home / ".config" / "lineup"),
            "CODEX_HOME": str(home / ".codex"),
            "LANG": "C.UTF-8",
        }
        machine = Machine(home, project, hub, env)
        code = await hub.pairing_code()
        machine.lineup("connect", cli, "--hub", hub.url, "--pair", code)
        stored = json.loads((home / ".config/lineup/coding-agents" / f"{cli}.json").read_text())
        machine.agent_id = stored["agentId"]
        await hub.confirm(machine.agent_id, "Laptop")
        yield machine
