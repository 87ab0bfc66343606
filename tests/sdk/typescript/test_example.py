"""The example adapter of ``examples/typescript`` against a real hub: it runs a command
only after a person approves exactly that command, and never after a no."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.models import Artifact, Interaction, InteractionStatus
from hub.testing import eventually
from tests.sdk.live import LiveHub, live_hub
from tests.sdk.typescript.node import REPO, node, node_environment

EXAMPLE = REPO / "examples" / "typescript"
EXIT_REJECTED = 77

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def start_example(
    hub: LiveHub, home: Path, cwd: Path, *command: str
) -> asyncio.subprocess.Process:
    if not (EXAMPLE / "node_modules" / "@lineup-hub" / "sdk").exists():
        raise AssertionError("the example has no SDK linked: run `make typescript-sdk`")
    return await asyncio.create_subprocess_exec(
        node(),
        str(EXAMPLE / "shell-approval.ts"),
        hub.url,
        await hub.pairing_code(),
        "--",
        *command,
        cwd=cwd,
        env=node_environment(LINEUP_AGENT_HOME=str(home)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )


async def finished(process: asyncio.subprocess.Process) -> tuple[int, str]:
    assert process.stdout is not None
    try:
        output = await asyncio.wait_for(process.stdout.read(), 60)
        return await asyncio.wait_for(process.wait(), 10), output.decode()
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def test_the_approved_command_runs_and_its_output_is_kept(
    hub: LiveHub, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    process = await start_example(hub, tmp_path / "home", work, "echo ran > marker; echo hello")
    card = await eventually(lambda: Interaction.filter(status=InteractionStatus.PENDING).first())
    assert card.payload["action"]["fields"]["command"] == "echo ran > marker; echo hello"
    assert card.payload["action"]["fields"]["cwd"] == str(work) and card.payload["risk"] == "high"
    assert not (work / "marker").exists(), "nothing runs before the answer"
    await hub.respond(card.id, "approve")
    status, output = await finished(process)
    assert status == 0, output
    assert (work / "marker").read_text() == "ran\n" and "hello" in output
    artifact = await Artifact.get(workspace_id=hub.workspace_id)
    assert artifact.summary.startswith("exit status 0") and "hello" in artifact.summary
    assert artifact.url.startswith("data:text/plain;base64,")
    assert artifact.created_by == f"agent:{card.agent_id}"


async def test_a_rejected_command_never_runs(hub: LiveHub, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    process = await start_example(hub, tmp_path / "home", work, "touch marker")
    card = await eventually(lambda: Interaction.filter(status=InteractionStatus.PENDING).first())
    await hub.respond(card.id, "reject")
    status, output = await finished(process)
    assert status == EXIT_REJECTED, output
    assert "not run" in output and not (work / "marker").exists()
