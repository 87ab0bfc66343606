"""The time a coding agent's hook adds to a tool call, beside a hook that does nothing.

Claude Code and Codex run a command hook through ``/bin/sh -c`` with the event's JSON on
stdin, and wait for it to exit. The floor is exactly that with a hook that does nothing
(``cat > /dev/null``): what the CLI spends on any hook. The hub's hook (the command
``lineup connect`` writes) is measured the same way against a live hub, for

- a report (``PostToolUse``, the event of every tool call that ran),
- a check (``PreToolUse`` of a call the CLI decides itself, before every tool call): the
  hub matches it against the workspace's deny rules (ten of them here, none matching), and
- a decision answered at once (``PermissionRequest``): a person-bot on the client socket
  (as a browser is) approves each card the moment it is pushed, so the figure includes the
  card's way to a person and the answer's way back.

Target: each ≤ 50 ms at p95 over the floor's p95, measured in the same run.
``python -m benchmarks.hooks`` on SQLite, or on PostgreSQL when
``LINEUP_TEST_DATABASE_URL`` names a server (``make bench`` runs it on both).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

from benchmarks.databases import on_a_fresh_database
from benchmarks.stats import summary
from hub.coding_agents import hook_command
from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import create_api_token, create_user
from hub.protocol.actions import action_hash
from hub.testing import HubProcess, opened

TARGET_MS = 50.0
REPORTS = 200
CHECKS = 200
# What a team might write; none names ``ls``, so every rule is tried.
DENY_RULES = [
    "Bash(git push --force:*)",
    "Bash(git reset --hard:*)",
    "Bash(terraform apply:*)",
    "Bash(terraform destroy:*)",
    "Bash(kubectl delete:*)",
    "Bash(rm -rf /:*)",
    "Edit(//etc/**)",
    "Edit(/deploy/**)",
    "Read(.env)",
    "WebFetch",
]
DECISIONS = 60
FLOOR = "cat > /dev/null"


async def _run_hook(command: str, event: dict[str, Any], env: dict[str, str], cwd: Path) -> float:
    """One hook run as the CLI runs it, in ms. Awaited on the event loop, which learns of the
    exit at once: ``subprocess.run(timeout=...)`` polls for it with sleeps of up to 50 ms,
    which would be measured as the hook's time."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    try:
        await asyncio.wait_for(process.communicate(json.dumps(event).encode()), 60)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        raise RuntimeError(f"the hook exited with {process.returncode}")
    return (time.perf_counter() - started) * 1000


async def _approver(url: str, token: str, workspace: str, stop: asyncio.Event) -> None:
    """A person who approves every card the moment it is asked, through the client socket
    a browser keeps open (pushed, not polled: polling would load the hub it measures)."""
    address = url.replace("http://", "ws://") + f"/ws/client?workspace={workspace}&after=0"
    headers = {"Authorization": f"Bearer {token}"}
    async with websockets.connect(address, additional_headers=headers) as socket:
        reading = asyncio.ensure_future(socket.recv())
        stopping = asyncio.ensure_future(stop.wait())
        while True:
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if stopping.done():
                reading.cancel()
                return
            frame = json.loads(reading.result())
            reading = asyncio.ensure_future(socket.recv())
            if frame.get("type") != "interaction.requested":
                continue
            card = frame["payload"]["interaction"]
            action = card["action"]
            answer = {
                "optionId": "approve",
                "actionHash": action_hash(action["kind"], action["fields"]),
            }
            await socket.send(
                json.dumps(
                    {
                        "id": f"evt_{card['id'][4:]}",
                        "type": "interaction.respond",
                        "payload": {"interactionId": card["id"], "response": answer},
                    }
                )
            )


async def measure() -> dict[str, Any]:
    return await on_a_fresh_database(_measure)


async def _measure(url: str, root: Path) -> dict[str, Any]:
    async with opened(url):
        user, workspace = await create_user("bench@example.com", "correct horse", "Bench")
        _, token = await create_api_token(user, "bench")
    hub = HubProcess(url, root / "hub")
    await asyncio.to_thread(hub.start)
    try:
        async with opened(url):
            code, _ = await create_pairing_code(
                workspace.id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
            )
        project = root / "project"
        project.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "LINEUP_AGENT_HOME": str(root / "agent"),
            "CLAUDE_CODE_ENTRYPOINT": "cli",
        }
        lineup = str(Path(sys.executable).parent / "lineup")
        await asyncio.to_thread(
            subprocess.run,
            [lineup, "connect", "claude-code", "--hub", hub.url, "--pair", code],
            env=env,
            cwd=project,
            check=True,
            capture_output=True,
            timeout=60,
        )
        stored = json.loads((root / "agent/coding-agents/claude-code.json").read_text())
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=hub.url, headers=headers, timeout=30) as http:
            await http.post(
                f"/api/v1/workspaces/{workspace.id}/agents/{stored['agentId']}/confirm",
                json={"name": "Bench laptop"},
            )
            command = hook_command.build("claude-code", 60)
            base = {"session_id": "bench", "cwd": str(project), "permission_mode": "default"}

            def event(name: str, n: int, **fields: Any) -> dict[str, Any]:
                return {**base, "hook_event_name": name, **fields, "tool_use_id": f"t{n}"}

            def report(n: int) -> dict[str, Any]:
                return event("PostToolUse", n, tool_name="Bash", tool_input={"command": "ls"})

            def check(n: int) -> dict[str, Any]:
                return event("PreToolUse", n, tool_name="Bash", tool_input={"command": "ls"})

            def decision(n: int) -> dict[str, Any]:
                command_n = {"command": f"touch file-{n}.txt", "description": "bench"}
                return event("PermissionRequest", n, tool_name="Bash", tool_input=command_n)

            # The session's task is made by the first event; warm both paths up.
            for n in range(5):
                await _run_hook(command, report(n), env, project)
            floor = [await _run_hook(FLOOR, report(n), env, project) for n in range(REPORTS)]
            reports = [await _run_hook(command, report(n), env, project) for n in range(REPORTS)]
            await http.put(
                f"/api/v1/workspaces/{workspace.id}/coding-agent-rules", json={"deny": DENY_RULES}
            )
            checks = [await _run_hook(command, check(n), env, project) for n in range(CHECKS)]
            stop = asyncio.Event()
            approver = asyncio.create_task(_approver(hub.url, token, workspace.id, stop))
            try:
                decisions = [
                    await _run_hook(command, decision(n), env, project) for n in range(DECISIONS)
                ]
            finally:
                stop.set()
                await approver
    finally:
        await asyncio.to_thread(hub.stop)
    result: dict[str, Any] = {
        "backend": "postgres" if url.startswith("postgres") else "sqlite",
        "floor_ms": summary(floor),
        "report_ms": summary(reports),
        "check_ms": summary(checks),
        "decision_ms": summary(decisions),
    }
    for name in ("report", "check", "decision"):
        added = result[f"{name}_ms"]["p95"] - result["floor_ms"]["p95"]
        result[f"{name}_added_p95_ms"] = round(added, 1)
        result[f"{name}_meets_target"] = added <= TARGET_MS
    return result


def main() -> int:
    result = asyncio.run(measure())
    print(
        f"hooks ({result['backend']}): floor p95 {result['floor_ms']['p95']:.1f} ms; "
        f"report p95 {result['report_ms']['p95']:.1f} ms "
        f"(+{result['report_added_p95_ms']} ms); check p95 {result['check_ms']['p95']:.1f} ms "
        f"(+{result['check_added_p95_ms']} ms); decision answered at once p95 "
        f"{result['decision_ms']['p95']:.1f} ms (+{result['decision_added_p95_ms']} ms); "
        f"target +{TARGET_MS:.0f} ms"
    )
    out = Path(__file__).with_name(f"results-hooks-{result['backend']}.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
