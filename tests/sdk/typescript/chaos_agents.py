"""TypeScript agents in the chaos run: a node process of them, driven over stdin/stdout.

``sdk/typescript/test/chaos-agents.ts`` runs the agents; ``TypeScriptAgents`` starts it,
asks what each agent saw (``status``), and closes them. Each agent's view is a
``RemoteAgent``, which the chaos test reads as it reads a Python agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.sdk.typescript.node import PACKAGE, node, node_environment

ANSWER_TIMEOUT_S = 60.0


@dataclass
class RemoteAgent:
    """What a TypeScript agent reported last."""

    agent_id: str
    conversation_id: str = ""  # where the person writes to it (the chaos test sets it)
    connected: bool = False
    pending_uplinks: int = 0
    connects: int = 0
    duplicates_dropped: int = 0
    task_starts: Counter[str] = field(default_factory=Counter)
    messages_seen: list[int] = field(default_factory=list)

    def update(self, report: dict[str, Any]) -> None:
        self.connected = bool(report["connected"])
        self.pending_uplinks = int(report["pendingUplinks"])
        self.connects = int(report["connects"])
        self.duplicates_dropped = int(report["duplicatesDropped"])
        self.task_starts = Counter({k: int(v) for k, v in report["taskStarts"].items()})
        self.messages_seen = [int(s) for s in report["messagesSeen"]]


class TypeScriptAgents:
    def __init__(self, hub_url: str, pairing_codes: list[str], state_dir: Path) -> None:
        self.hub_url = hub_url
        self.pairing_codes = pairing_codes
        self.state_dir = state_dir
        self.agents: list[RemoteAgent] = []
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> list[RemoteAgent]:
        self._process = await asyncio.create_subprocess_exec(
            node(),
            "test/chaos-agents.ts",
            cwd=PACKAGE,
            env=node_environment(
                LINEUP_CHAOS_HUB=self.hub_url,
                LINEUP_CHAOS_CODES=",".join(self.pairing_codes),
                LINEUP_CHAOS_STATE=str(self.state_dir),
            ),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=16 * 1024 * 1024,  # a status line lists every sequence each agent saw
        )
        first = await self._answer()
        self.agents = [RemoteAgent(str(report["agentId"])) for report in first["agents"]]
        self._update(first)
        return self.agents

    async def refresh(self) -> None:
        """Ask every agent what it saw now."""
        async with self._lock:
            await self._send("status")
            self._update(await self._answer())

    async def close(self) -> None:
        """Close every agent (their handlers stop; what waits is kept), with a last report."""
        if self._process is None or self._process.returncode is not None:
            return
        async with self._lock:
            try:
                await self._send("close")
                self._update(await self._answer())
                await asyncio.wait_for(self._process.wait(), ANSWER_TIMEOUT_S)
            finally:
                if self._process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self._process.pid, signal.SIGKILL)
                    await self._process.wait()

    async def _send(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(f"{line}\n".encode())
        await self._process.stdin.drain()

    async def _answer(self) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        line = await asyncio.wait_for(self._process.stdout.readline(), ANSWER_TIMEOUT_S)
        if not line:
            raise AssertionError(f"the TypeScript agents ended (status {self._process.returncode})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _update(self, answer: dict[str, Any]) -> None:
        for agent, report in zip(self.agents, answer["agents"], strict=True):
            agent.update(report)
