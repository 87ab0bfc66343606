"""PostgreSQL stopped and started again under load: clear errors while it is down, no hang,
recovery after, and no acknowledged event lost or repeated.

Needs the server ``scripts/with-postgres`` starts (it exports how to stop and start it).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest

from tests.faults.sender import Sender
from tests.faults.test_hub_kill import senders_for
from tests.figures import EVENTS_VERIFIED, FAULTS_INJECTED, record
from tests.sdk.live import LiveHub, live_hub

PG_CTL = os.environ.get("LINEUP_TEST_PG_CTL")
EVENTS = 2000
RUN_LIMIT_S = 240.0

pytestmark = [
    pytest.mark.timeout(RUN_LIMIT_S + 60),
    pytest.mark.skipif(PG_CTL is None, reason="needs the PostgreSQL of scripts/with-postgres"),
]


def pg_ctl(*args: str) -> None:
    assert PG_CTL
    subprocess.run([*shlex.split(PG_CTL), *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


@pytest.fixture
def postgres_restored() -> AsyncIterator[None]:
    """Whatever happens in the test, the server runs again afterwards for the next ones."""
    yield
    try:
        pg_ctl("status")
    except subprocess.CalledProcessError:
        pg_ctl("-w", "-o", os.environ["LINEUP_TEST_PG_OPTIONS"], "start")


async def logged_events(database_url: str, workspace_id: str) -> list[tuple[str, int]]:
    """The log read over a new connection (the ORM's pool in this process saw the restart)."""
    url = urlunsplit(urlsplit(database_url)._replace(query=""))
    connection = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1))
    try:
        rows = await connection.fetch(
            "SELECT id, sequence FROM event WHERE workspace_id = $1 ORDER BY sequence",
            workspace_id,
        )
    finally:
        await connection.close()
    return [(row["id"], int(row["sequence"])) for row in rows]


async def test_a_postgres_restart_under_load_loses_nothing(
    hub: LiveHub, db: str, postgres_restored: None
) -> None:
    senders: list[Sender] = await senders_for(hub, 2, EVENTS // 2)
    running = [asyncio.create_task(s.run(RUN_LIMIT_S)) for s in senders]
    async with asyncio.timeout(RUN_LIMIT_S):
        while sum(len(s.acked) for s in senders) < EVENTS // 4:  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    await asyncio.to_thread(pg_ctl, "-w", "-m", "fast", "stop")
    record(FAULTS_INJECTED)
    acked_when_down = sum(len(s.acked) for s in senders)
    # While it is down the API answers, at once and clearly, that it cannot serve.
    for _ in range(3):
        try:
            response = await hub.http.get("/api/v1/workspaces", timeout=20)
        except httpx.TimeoutException:
            raise AssertionError("the API hung while PostgreSQL was down") from None
        assert response.status_code == 503, (response.status_code, response.text)
        error = response.json()["error"]
        assert error["code"] and error["message"] and error["hint"], error
        await asyncio.sleep(0.3)
    health = await hub.http.get("/healthz", timeout=20)
    assert health.status_code == 503, health.text

    await asyncio.to_thread(pg_ctl, "-w", "-o", os.environ["LINEUP_TEST_PG_OPTIONS"], "start")
    await asyncio.gather(*running)
    assert all(s.done for s in senders)
    assert acked_when_down < EVENTS
    # What the agents were told meanwhile, if anything, named the cause.
    told = {str(error["code"]) for sender in senders for error in sender.errors}
    assert told <= {"database_unavailable"}, told
    events = await logged_events(db, hub.workspace_id)
    assert [sequence for _, sequence in events] == list(range(1, len(events) + 1))
    count = Counter(envelope_id for envelope_id, _ in events)
    sequence_of = dict(events)
    for sender in senders:
        for envelope_id, sequence in sender.acked.items():
            assert count[envelope_id] == 1 and sequence_of[envelope_id] == sequence
    record(EVENTS_VERIFIED, EVENTS)
    response = await hub.http.get("/api/v1/workspaces", timeout=20)
    assert response.status_code == 200
