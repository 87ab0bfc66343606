"""``lineup agent demo`` and ``lineup agent exec`` as their own processes against a real hub.

The demo goes through the §15 flow with the adapter killed while it waits for a person:
the person approves while it is offline, a restarted adapter (no pairing code: the saved
credential) gets the decision once and finishes without repeating a step. ``exec`` runs its
command only after an approval and never after a rejection.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.core.store.models import Agent as AgentRow
from hub.core.store.models import Artifact, Event, Interaction, InteractionStatus, Task
from tests.sdk.live import HEARTBEAT_INTERVAL_S, LiveHub, live_hub


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


class Adapter:
    """A ``lineup agent ...`` process; always stopped at the end of the test."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.log_path = cwd / f"adapter-{len(list(cwd.glob('adapter-*')))}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "hub.cli", "agent", *args],
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def wait(self, within_s: float = 60.0) -> int:
        async with asyncio.timeout(within_s):
            while self.process.poll() is None:  # noqa: ASYNC110 - a child process
                await asyncio.sleep(0.05)
        return int(self.process.returncode)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


@pytest.fixture
def adapters(tmp_path: Path) -> Iterator[Any]:
    started: list[Adapter] = []
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {
        **os.environ,
        "LINEUP_AGENT_HOME": str(tmp_path / "agent-home"),
        "LINEUP_DATA_DIR": str(tmp_path / "agent-data"),
        "LINEUP_SECRET_KEY": "agent-side-secret-" + "y" * 32,
        "SECRET_TOKEN": "do-not-show-this-value",
    }

    def start(*args: str) -> Adapter:
        adapter = Adapter(list(args), workdir, env)
        started.append(adapter)
        return adapter

    yield start
    for adapter in started:
        adapter.kill()


async def until(check: Any, within_s: float = 30.0) -> Any:
    async with asyncio.timeout(within_s):
        while True:
            found = await check()
            if found:
                return found
            await asyncio.sleep(0.05)


async def test_demo_survives_being_killed_while_waiting_and_repeats_no_step(
    hub: LiveHub, adapters: Any
) -> None:
    code = await hub.pairing_code()
    first = adapters("demo", "--hub", hub.url, "--pair", code, "--pause", "0")
    agent = await until(lambda: AgentRow.filter(workspace_id=hub.workspace_id).first())
    await hub.confirm(agent.id, "Demo agent")
    conversation = await hub.conversation(agent.id)
    task_id = await hub.task(agent.id, "Tidy the project's dependencies", conversation)
    card = await until(
        lambda: Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING).first()
    )
    assert card.payload["risk"] == "high" and card.payload["impact"]
    first.kill()  # the adapter drops while it waits for the person

    async def offline() -> bool:
        listed = await hub.api("GET", "/agents")
        return any(a["id"] == agent.id and a["status"] == "offline" for a in listed["agents"])

    await until(offline, within_s=20 * HEARTBEAT_INTERVAL_S)
    await hub.respond(card.id, "approve", comment="go ahead")  # decided while offline

    second = adapters("demo", "--hub", hub.url, "--pause", "0")  # no code: saved credential
    await until(lambda: Task.filter(id=task_id, status="succeeded").exists())
    second.kill()
    assert second.output().count("approved by") == 1

    events = await Event.filter(workspace_id=hub.workspace_id).order_by("sequence")
    by_agent = [
        e
        for e in events
        if e.actor == f"agent:{agent.id}"
        and (e.task_id == task_id or e.payload.get("parentTaskId") == task_id)
    ]
    steps = [(e.type, e.payload.get("status"), e.payload.get("progress")) for e in by_agent]
    assert steps.count(("task.accepted", None, None)) == 1
    assert steps.count(("task.status_changed", "running", 25)) == 1
    assert steps.count(("task.status_changed", "running", 50)) == 1
    assert [s[0] for s in steps].count("task.child_created") == 1
    assert [s[0] for s in steps].count("interaction.requested") == 1
    assert [s[0] for s in steps].count("message.created") == 1
    assert [s[0] for s in steps].count("artifact.created") == 1
    assert [s[1] for s in steps].count("succeeded") == 1
    assert [e.type for e in events].count("interaction.resolved") == 1
    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert detail["status"] == "succeeded" and len(detail["artifacts"]) == 1
    assert [c["status"] for c in detail["children"]] == ["succeeded"]


async def _exec_card(hub: LiveHub) -> Interaction:
    return await until(  # type: ignore[no-any-return]
        lambda: Interaction.filter(
            workspace_id=hub.workspace_id, status=InteractionStatus.PENDING
        ).first()
    )


COMMAND = [
    sys.executable,
    "-c",
    "import pathlib; pathlib.Path('ran.txt').write_text('yes'); print('hello from the command');"
    " raise SystemExit(3)",
]


async def test_exec_runs_the_command_only_after_approval(
    hub: LiveHub, adapters: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "work" / "ran.txt"
    runner = adapters("exec", "--hub", hub.url, "--pair", await hub.pairing_code(), "--", *COMMAND)
    card = await _exec_card(hub)
    details = card.payload["details"]
    assert details["argv"] == COMMAND and details["workingDirectory"] == str(tmp_path / "work")
    assert "SECRET_TOKEN" in details["environment"]["names"]
    assert "SECRET_TOKEN" in details["environment"]["namesThatLookSensitive"]
    assert "do-not-show-this-value" not in str(card.payload)
    assert card.payload["risk"] == "high"
    await asyncio.sleep(0.3)  # give a wrongly eager runner the chance to misbehave
    assert not marker.exists()
    await hub.respond(card.id, "approve")
    assert await runner.wait() == 3  # the command's own exit status
    assert marker.read_text() == "yes"
    assert "hello from the command" in runner.output()
    artifact = await until(lambda: Artifact.filter(workspace_id=hub.workspace_id).first())
    assert "exit status 3" in artifact.summary and "hello from the command" in artifact.summary
    assert artifact.url.startswith("data:text/plain;base64,")
    # The run is the agent's own task: the card, the log and the outcome all sit on it.
    task = await Task.get(id=card.task_id)
    assert task.title.startswith("Run ") and task.status == "failed"
    assert artifact.task_id == task.id and "exit status 3" in task.error


async def test_exec_never_runs_the_command_after_a_rejection(
    hub: LiveHub, adapters: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "work" / "ran.txt"
    runner = adapters("exec", "--hub", hub.url, "--pair", await hub.pairing_code(), "--", *COMMAND)
    card = await _exec_card(hub)
    await hub.respond(card.id, "reject", comment="not on a Friday")
    assert await runner.wait() == 77
    assert not marker.exists()
    assert "rejected by" in runner.output() and "not on a Friday" in runner.output()
    assert not await Artifact.filter(workspace_id=hub.workspace_id).exists()
    assert (await Task.get(id=card.task_id)).status in ("cancelled", "failed")


def spawn_example(hub_url: str, code: str, home: Path, log_path: Path) -> subprocess.Popen[bytes]:
    example = Path(__file__).parents[2] / "examples" / "minimal_agent.py"
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, str(example), hub_url, code],
            env={**os.environ, "LINEUP_AGENT_HOME": str(home)},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def test_the_minimal_example_is_a_complete_adapter(hub: LiveHub, tmp_path: Path) -> None:
    code = await hub.pairing_code()
    process = spawn_example(hub.url, code, tmp_path / "example-home", tmp_path / "example.log")
    try:
        agent = await until(lambda: AgentRow.filter(workspace_id=hub.workspace_id).first())
        task_id = await hub.task(agent.id, "Rename the module")
        card = await until(
            lambda: Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING).first()
        )
        await hub.respond(card.id, "approve")
        await until(lambda: Task.filter(id=task_id, status="succeeded").exists())
        assert await Artifact.filter(task_id=task_id).count() == 1
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
