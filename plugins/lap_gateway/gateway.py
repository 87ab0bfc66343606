"""The gateway's state in one process: live sessions, the presence sweeper, shutdown.

One live socket per agent, across every hub process: each session logs
``agent.connected`` as it starts, and an older socket of the agent, wherever it is, reads
that among its downlink events and closes with ``connection_replaced``
(``plugins.lap_gateway.downlink``), so each downlink goes out on one socket only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from hub.config import Settings
from hub.core.agents.presence import PresenceSweeper
from hub.core.log.bus import DEFAULT_BUS, EventBus
from hub.host.lifecycle import SERVICE_RESTART

if TYPE_CHECKING:
    from plugins.lap_gateway.session import AgentSession

logger = logging.getLogger(__name__)

SHUTDOWN_WAIT_S = 5.0


class Gateway:
    def __init__(self, settings: Settings, bus: EventBus | None = None) -> None:
        self.settings = settings
        self.bus = bus or DEFAULT_BUS
        self.sweeper = PresenceSweeper(
            heartbeat_interval_s=settings.heartbeat_interval_s,
            grace_period_s=settings.agent_grace_period_s,
        )
        self._open: set[AgentSession] = set()

    def opened(self, session: AgentSession) -> None:
        self._open.add(session)

    def closed(self, session: AgentSession) -> None:
        self._open.discard(session)

    @property
    def session_count(self) -> int:
        return len(self._open)

    def start(self) -> None:
        self.sweeper.start()

    async def stop(self) -> None:
        """Close every socket and wait for its session to end, then stop the sweeper.

        Runs before the database closes, so no session is left querying a closing pool.
        """
        await self.close_sockets()
        await self.sweeper.stop()

    async def close_sockets(self) -> None:
        """Close every socket with 1012 (come back soon) and wait for its session to end."""
        sessions = list(self._open)
        for session in sessions:
            await session.close(SERVICE_RESTART)
        if sessions:
            _, pending = await asyncio.wait(
                [asyncio.create_task(s.finished.wait()) for s in sessions],
                timeout=SHUTDOWN_WAIT_S,
            )
            for waiter in pending:
                waiter.cancel()
            if pending:
                logger.warning("%d agent session(s) did not end in time", len(pending))
