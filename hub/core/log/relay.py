"""Several hub processes on one PostgreSQL: what one appends, live readers on all see.

Each process publishes its own appends on its in-process bus. To reach the others:

* ``append_event`` issues ``pg_notify`` *inside* the append transaction (payload
  ``"<process> <workspace> <first> <last>"``: the sequences one group commit wrote).
  PostgreSQL delivers a notification only when its transaction commits, and in commit
  order, so a notification never announces an event another process cannot read yet.
* ``PostgresRelay`` (one per process) listens on its own connection. For each notification
  from another process it reads those events from the log by (workspace, sequence) and
  publishes them on the local bus; agent sockets, browser sockets and channels then see
  them as if they had been appended here. Readers already fill gaps from the log
  (``hub.core.log.feed``), so a missed notification costs latency, never an event.
* Transient frames (text still streaming in, ``sequence`` 0) are not in the log; they ride
  in the notification's payload itself when they fit PostgreSQL's 8000-byte limit.

After its connection drops (a database restart, its backend terminated), the relay
reconnects with backoff; it learns of the drop from the connection's termination listener,
since nothing else it awaits would fail. Notifications sent meanwhile are lost, not the
events: a live reader that next sees N+5 after N reads N+1..N+4 from the log. The relay
republishes only the events each notification names, so bus listeners never see one of
this process's own events twice. Its connection shows in ``pg_stat_activity`` as
``lineup-relay-<pid>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import uuid
from dataclasses import replace
from functools import partial
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hub.core.log.bus import DEFAULT_BUS, EventBus, PublishedEvent
from hub.core.log.envelopes import to_published
from hub.core.store.models import Event

logger = logging.getLogger(__name__)

CHANNEL = "lineup_events"
PROCESS_ID = uuid.uuid4().hex[:12]
"""Tells this process's own notifications apart: they were published here already."""

APPLICATION_NAME = "lineup-relay-{pid}"
"""How the listening connection shows in ``pg_stat_activity``, with the process id: an
operator (or a test) can tell which process's relay it is."""

_MAX_PAYLOAD = 7900  # PostgreSQL refuses notification payloads of 8000 bytes or more
_RECONNECT_MAX_S = 10.0


def _settle(future: asyncio.Future[None], _connection: Any) -> None:
    if not future.done():
        future.set_result(None)


class PostgresRelay:
    def __init__(self, database_url: str, bus: EventBus | None = None) -> None:
        parts = urlsplit(database_url.replace("postgres://", "postgresql://", 1))
        self._dsn = urlunsplit(parts._replace(query=""))
        self._bus = bus or DEFAULT_BUS
        self._incoming: asyncio.Queue[str] = asyncio.Queue()
        self._outgoing: asyncio.Queue[str] = asyncio.Queue(maxsize=10_000)
        self._connection: Any = None
        self.connected = asyncio.Event()

    async def run(self) -> None:
        """Relay until cancelled, reconnecting after failures."""
        self._bus.add_listener(self._relay_transient)
        try:
            await self._listen()
        finally:
            self._bus.remove_listener(self._relay_transient)

    async def _listen(self) -> None:
        import asyncpg

        delay = 0.2
        while True:
            try:
                self._connection = await asyncpg.connect(
                    self._dsn,
                    server_settings={"application_name": APPLICATION_NAME.format(pid=os.getpid())},
                )
                lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._connection.add_termination_listener(partial(_settle, lost))
                await self._connection.add_listener(CHANNEL, self._on_notification)
                self.connected.set()
                delay = 0.2
                await self._relay_until(lost)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                logger.warning("event relay lost its connection (%s); retrying", error)
            finally:
                self.connected.clear()
                if self._connection is not None:
                    with contextlib.suppress(Exception):
                        await self._connection.close(timeout=2)
                    self._connection = None
            await asyncio.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, _RECONNECT_MAX_S)

    async def _relay_until(self, lost: asyncio.Future[None]) -> None:
        """Relay both ways until the connection is lost or a direction fails.

        A listening connection is only read from: nothing awaits on it while no text
        streams, so the loss of it (the backend terminated, the server restarted) would go
        unnoticed, and this process would hear of the others' appends only through the log
        watch, forever. The termination listener turns the loss into an error here."""
        directions = [
            asyncio.create_task(self._publish_incoming()),
            asyncio.create_task(self._send_outgoing()),
        ]
        try:
            done, _ = await asyncio.wait([*directions, lost], return_when=asyncio.FIRST_COMPLETED)
            for finished in done:
                finished.result()  # a direction's error, as it was raised
            raise ConnectionError("the listening connection was closed by the server")
        finally:
            # Neither direction outlives its connection: the next connection has its own.
            for direction in directions:
                direction.cancel()
            await asyncio.gather(*directions, return_exceptions=True)

    def _on_notification(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        self._incoming.put_nowait(payload)

    async def _publish_incoming(self) -> None:
        while True:
            payload = await self._incoming.get()
            origin, _, rest = payload.partition(" ")
            if origin == PROCESS_ID:
                continue
            if rest.startswith("{"):
                frame = json.loads(rest)
                self._bus.publish(
                    PublishedEvent(
                        workspace_id=frame["workspaceId"],
                        sequence=0,
                        type=frame["type"],
                        recipient_agent_id=None,
                        envelope=frame,
                        relayed=True,
                    )
                )
                continue
            workspace_id, first, last = rest.split(" ")
            events = await Event.filter(
                workspace_id=workspace_id, sequence__gte=int(first), sequence__lte=int(last)
            ).order_by("sequence")
            for event in events:
                self._bus.publish(replace(to_published(event), relayed=True))

    def _relay_transient(self, event: PublishedEvent) -> None:
        if event.sequence > 0 or event.relayed:
            return  # durable events travel by the append's own notification
        payload = f"{PROCESS_ID} " + json.dumps(event.envelope, separators=(",", ":"))
        if len(payload.encode()) > _MAX_PAYLOAD:
            return  # too big to relay live; the final message is in the log
        with contextlib.suppress(asyncio.QueueFull):
            self._outgoing.put_nowait(payload)

    async def _send_outgoing(self) -> None:
        while True:
            payload = await self._outgoing.get()
            await self._connection.execute("SELECT pg_notify($1, $2)", CHANNEL, payload)
