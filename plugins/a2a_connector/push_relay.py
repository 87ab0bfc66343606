"""Several hub processes on one PostgreSQL: a push reaches the process driving its task.

A remote posts to the hub's public URL, and behind a load balancer that may be any of the
hub's processes, while only the one holding the call's lease reads the task
(``hub.core.agents.remote_calls``). The process that took an authentic push and drives no
such call passes it on with ``pg_notify`` (payload: the hub task id); every process listens
on its own connection and wakes its runner of that call, if it has one. A notification lost
while a listener reconnects costs latency only: the driver reads the task at its next bound
(``plugins.a2a_connector.updates``), as for a push that never came.

Only the task id travels, and only after the webhook checked the push's token: what wakes a
runner here is what would have woken it in the receiving process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tortoise import connections

logger = logging.getLogger(__name__)

CHANNEL = "lineup_a2a_push"
_RECONNECT_MAX_S = 10.0


def _settle(future: asyncio.Future[None], _connection: Any) -> None:
    if not future.done():
        future.set_result(None)


async def pass_on(call_id: str) -> None:
    """Tell the other processes that the call's remote pushed a change."""
    await connections.get("default").execute_query("SELECT pg_notify($1, $2)", [CHANNEL, call_id])


class PushListener:
    """Wakes this process's runners for pushes other processes took; ``run`` until cancelled."""

    def __init__(self, database_url: str, wake: Callable[[str], None]) -> None:
        parts = urlsplit(database_url.replace("postgres://", "postgresql://", 1))
        self._dsn = urlunsplit(parts._replace(query=""))
        self._wake = wake
        self.listening = asyncio.Event()

    async def run(self) -> None:
        import asyncpg

        delay = 0.2
        while True:
            connection = None
            try:
                connection = await asyncpg.connect(self._dsn)
                lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                connection.add_termination_listener(partial(_settle, lost))
                await connection.add_listener(CHANNEL, self._on_notification)
                self.listening.set()
                delay = 0.2
                await lost  # nothing else would tell that the server dropped the connection
            except asyncio.CancelledError:
                raise
            except Exception as error:
                logger.warning("a2a push listener lost its connection (%s); retrying", error)
            finally:
                self.listening.clear()
                if connection is not None:
                    with contextlib.suppress(Exception):
                        await connection.close(timeout=2)
            await asyncio.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, _RECONNECT_MAX_S)

    def _on_notification(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        self._wake(payload)


__all__ = ["CHANNEL", "PushListener", "pass_on"]
