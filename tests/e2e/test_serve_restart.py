"""SIGTERM to `lineup serve` with an SDK agent connected: the agent is told 1012 (service
restart), the process exits cleanly within a few seconds, and the agent reconnects by
itself to the hub that takes over the address."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import create_user
from hub.sdk.agent import Agent
from hub.sdk.backoff import Backoff
from hub.testing import HubProcess, opened

SECRET = "restart-secret-key-" + "s" * 32
STOPS_WITHIN_S = 8.0


async def test_sigterm_tells_an_sdk_agent_1012_and_it_comes_back_to_the_successor(
    database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with opened(database_url):
        _user, workspace = await create_user("restart@example.com", "correct horse")
        code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
    first = HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET).start()
    successor = HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET)
    successor.port, successor.url = first.port, first.url
    successor.env["LINEUP_PORT"] = str(first.port)
    agent = Agent(
        first.url,
        pairing_code=code,
        name="worker",
        state_dir=tmp_path / "agent",
        backoff=Backoff(initial_s=0.2, maximum_s=0.5),
    )
    caplog.set_level(logging.INFO, logger="hub.sdk.connection")
    try:
        async with asyncio.timeout(30):
            await agent.start()
        assert agent.connects == 1

        began = time.monotonic()
        await asyncio.to_thread(first.stop, timeout=STOPS_WITHIN_S)
        took = time.monotonic() - began
        assert first.process is not None and first.process.returncode == 0, first.log()
        assert took < STOPS_WITHIN_S
        assert any("1012 (service restart)" in record.getMessage() for record in caplog.records), (
            caplog.text
        )

        await asyncio.to_thread(successor.start)
        async with asyncio.timeout(30):
            await agent.wait_connected()
        assert agent.connects == 2
    finally:
        await agent.close()
        first.stop()
        successor.stop()
