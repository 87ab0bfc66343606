"""``kill -9`` of the hub in the middle of a 5,000-event run loses and repeats nothing.

Several raw LAP agents pipeline numbered messages into a live hub; when part of them is
acknowledged, the hub is killed with SIGKILL (no shutdown code runs) and started again on
the same database. The agents reconnect and resend whatever was not acknowledged. In the
end every acknowledged envelope is in the log exactly once, under the sequence its ack
named, and the workspace's sequence has no gap.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.models import Event, Workspace
from tests.core.agent_setup import paired_agent
from tests.faults.sender import Sender
from tests.figures import EVENTS_VERIFIED, FAULTS_INJECTED, record
from tests.sdk.live import LiveHub, live_hub

AGENTS = 4
# 5,000 on PostgreSQL, the production database; fewer on SQLite, whose single writer makes
# the same run several times longer and proves nothing more.
EVENTS = int(os.environ.get("LINEUP_FAULT_EVENTS", "5000"))
SQLITE_EVENTS = int(os.environ.get("LINEUP_FAULT_EVENTS", "1200"))
RUN_LIMIT_S = 240.0 + EVENTS / 50  # room for the larger `make faults` run

pytestmark = pytest.mark.timeout(RUN_LIMIT_S + 60)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def senders_for(hub: LiveHub, count: int, per_agent: int) -> list[Sender]:
    workspace = await Workspace.get(id=hub.workspace_id)
    senders = []
    for n in range(count):
        agent, credential = await paired_agent(workspace, name=f"sender-{n}")
        conversation = await hub.conversation(agent.id, f"stream {n}")
        senders.append(Sender(hub.url, credential, conversation, f"a{n}", per_agent))
    return senders


async def assert_log_holds_exactly(hub: LiveHub, senders: list[Sender]) -> int:
    """Every acknowledged envelope once, at its acknowledged sequence; no gap anywhere."""
    events = await Event.filter(workspace_id=hub.workspace_id).order_by("sequence")
    sequences = [int(e.sequence) for e in events]
    assert sequences == list(range(1, len(sequences) + 1)), "the sequence has a gap"
    where = Counter(e.id for e in events)
    sequence_of = {e.id: int(e.sequence) for e in events}
    verified = 0
    for sender in senders:
        for envelope_id, sequence in sender.acked.items():
            assert where[envelope_id] == 1, (envelope_id, where[envelope_id])
            assert sequence_of[envelope_id] == sequence, envelope_id
            verified += 1
    record(EVENTS_VERIFIED, verified)
    return verified


async def test_kill_9_mid_run_loses_and_repeats_no_acknowledged_event(
    hub: LiveHub, is_postgres: bool
) -> None:
    events = EVENTS if is_postgres else SQLITE_EVENTS
    senders = await senders_for(hub, AGENTS, events // AGENTS)
    running = [asyncio.create_task(s.run(RUN_LIMIT_S)) for s in senders]

    async with asyncio.timeout(RUN_LIMIT_S):
        while sum(len(s.acked) for s in senders) < events * 2 // 5:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    acked_before_kill = sum(len(s.acked) for s in senders)
    hub.process.kill()
    record(FAULTS_INJECTED)
    await asyncio.sleep(0.5)  # the agents notice and start reconnecting to nothing
    hub.process.start()

    await asyncio.gather(*running)
    assert all(s.done for s in senders)
    assert acked_before_kill < events
    # Each agent came back: it has connected again after the kill.
    assert all(s.connections >= 2 for s in senders), [s.connections for s in senders]
    assert await assert_log_holds_exactly(hub, senders) == events
