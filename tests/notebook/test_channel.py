"""The notebook surface is a channel like the others: an entry point of the hub, run by the
same runtime, declaring its surface; and the inbox keeps following across a hub restart."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.channels.notebook import NotebookChannel
from hub.channels.registry import discover
from hub.channels.runtime import ChannelRuntime
from hub.config import load_settings
from hub.core.notify.preferences import surfaces
from hub.notebook.inbox import Inbox
from tests.notebook.live import notebook_agent, person, running_task
from tests.sdk.live import LiveHub, live_hub


def test_the_notebook_channel_is_an_entry_point_of_the_hub() -> None:
    found = discover()["notebook"]
    assert found.error is None and found.channel is NotebookChannel
    assert found.distribution == "lineup-hub"


async def test_the_runtime_runs_it_and_declares_the_surface(db: str, tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, secret_key="notebook-test-secret-" + "k" * 32)
    runtime = ChannelRuntime(settings, {"notebook": NotebookChannel})
    await runtime.start()
    try:
        assert isinstance(runtime.channels["notebook"], NotebookChannel)
        declared = surfaces()["notebook"]
        assert declared.defaults == frozenset()  # the notebook reads the log: no rows
    finally:
        await runtime.stop()
    assert "notebook" not in surfaces()


def test_the_inbox_needs_none_of_the_servers_packages() -> None:
    """A notebook on an agent's or analyst's machine: no Quart, Tortoise or asyncpg."""
    probe = (
        "import sys\n"
        "for name in ('quart', 'tortoise', 'asyncpg', 'hypercorn'):\n"
        "    sys.modules[name] = None\n"
        "import hub.notebook, hub.notebook.inbox, hub.sdk.notebook\n"
        "print('ok')\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.stdout.strip() == "ok", shown.stderr


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def test_the_inbox_catches_up_after_the_hub_restarts(hub: LiveHub, tmp_path: Path) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    task = await running_task(people, agent)
    inbox = await Inbox.open(people)
    try:
        assert inbox.feed is not None
        await asyncio.wait_for(inbox.feed.connected.wait(), 30)
        hub.process.stop()
        # Asked while the hub is down: the SDK keeps it until acknowledged.
        waiting = asyncio.create_task(task.request_approval("Asked across a restart?"))
        hub.process.start()
        await inbox.wait_for(lambda box: len(box.pending) == 1, timeout_s=60)
        assert inbox.feed.connects >= 2
        (card,) = inbox.pending
        card.option_buttons["approve"].click()
        await card.answered()
        assert (await asyncio.wait_for(waiting, 30)).via == "notebook"
    finally:
        await inbox.close()
        await agent.close()


async def test_a_notebook_agent_keeps_its_credential_and_re_pairs_once_revoked(
    hub: LiveHub, tmp_path: Path
) -> None:
    people = await person(hub)
    first = await notebook_agent(people, tmp_path / "agent")
    await first.close()
    again = await notebook_agent(people, tmp_path / "agent")  # the kept credential
    assert again.agent_id == first.agent_id
    await again.close()
    await people.request("POST", f"/workspaces/{hub.workspace_id}/agents/{first.agent_id}/revoke")
    fresh = await notebook_agent(people, tmp_path / "agent")
    try:
        assert fresh.agent_id != first.agent_id and fresh.connected
        agents = (await hub.api("GET", "/agents"))["agents"]
        assert {a["id"]: a["status"] for a in agents}[fresh.agent_id] == "online"
    finally:
        await fresh.close()
