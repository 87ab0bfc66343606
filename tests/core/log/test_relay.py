"""The relay between hub processes comes back after its listening connection is cut.

Nothing is sent on that connection while no text streams: it only listens. When the server
ends it (``pg_terminate_backend``, a restart, a failover), the relay must notice by itself
and listen again, or every later append of the other processes reaches this one only
through the log watch's polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from hub import testing
from hub.core.log.bus import EventBus, PublishedEvent
from hub.core.log.events import append_event
from hub.core.log.relay import APPLICATION_NAME, CHANNEL, PostgresRelay
from hub.core.store.models import Workspace
from hub.testing import eventually

pytestmark = pytest.mark.skipif(
    testing.test_postgres_url() is None, reason="the relay listens on PostgreSQL only"
)


def _dsn(database_url: str) -> str:
    parts = urlsplit(database_url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, "", ""))


async def test_the_relay_listens_again_after_its_connection_is_terminated(
    workspace: Workspace, database_url: str
) -> None:
    bus, elsewhere = EventBus(), EventBus()
    relayed: list[PublishedEvent] = []
    bus.add_listener(lambda event: relayed.append(event) if event.relayed else None)
    relay = PostgresRelay(database_url, bus=bus)
    running = asyncio.create_task(relay.run())
    admin = await asyncpg.connect(_dsn(database_url))

    async def backend() -> int | None:
        pid = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = "
            "current_database()",
            APPLICATION_NAME.format(pid=os.getpid()),
        )
        return int(pid) if pid else None

    try:
        first = await eventually(backend, within=10)
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", first)

        async def another_backend() -> bool:
            return (await backend()) not in (None, first)

        await eventually(another_backend, within=10)
        await asyncio.wait_for(relay.connected.wait(), 10)
        # An append announced by another process reaches this bus through the new connection.
        event = await append_event(workspace.id, "note.added", {}, actor="system", bus=elsewhere)
        note = f"other {workspace.id} {event.sequence} {event.sequence}"
        await admin.execute("SELECT pg_notify($1, $2)", CHANNEL, note)
        await eventually(lambda: [e.sequence for e in relayed] == [event.sequence], within=10)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await admin.close()
