"""A hub restarted (``kill -9``) while an approval waits: the person's answer still reaches
the agent, which goes on and finishes the task, each step once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.models import Event, Interaction, InteractionStatus, Task
from hub.sdk import Agent, Backoff
from hub.sdk.adapters import demo
from tests.figures import EVENTS_VERIFIED, FAULTS_INJECTED, record
from tests.sdk.live import LiveHub, live_hub

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def until(check, within_s: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(within_s):
        while not await check():  # noqa: ASYNC110 - the state is in the database
            await asyncio.sleep(0.05)


async def test_an_answer_given_after_a_hub_kill_reaches_the_waiting_agent(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = Agent(
        hub.url,
        pairing_code=await hub.pairing_code(),
        name="Demo",
        state_dir=tmp_path / "agent",
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
    )
    demo.install(agent, pause_s=0, say=lambda line: None)
    async with agent:
        assert agent.agent_id is not None
        await hub.confirm(agent.agent_id, "Demo")
        task_id = await hub.task(agent.agent_id, "Migrate the production database")
        pending: list[Interaction] = []

        async def card_waiting() -> bool:
            pending[:] = await Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING)
            return bool(pending)

        await until(card_waiting)
        hub.process.kill()
        record(FAULTS_INJECTED)
        hub.process.start()
        await hub.respond(pending[0].id, "approve")

        async def finished() -> bool:
            return bool((await Task.get(id=task_id)).status == "succeeded")

        await until(finished)
    events = await Event.filter(workspace_id=hub.workspace_id, task_id=task_id)
    kinds = [e.type for e in events]
    assert kinds.count("interaction.requested") == 1 and kinds.count("interaction.resolved") == 1
    assert kinds.count("task.accepted") == 1
    record(EVENTS_VERIFIED, len(events))
