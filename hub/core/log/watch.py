"""Live readers catch up with events this process's bus never carried.

The bus hears of this process's appends and, on PostgreSQL, of the other processes' through
the relay. What it can miss: events written while the relay was reconnecting, or by a
process that notifies nobody (a ``lineup`` command on SQLite). Live readers would then
learn of them only at their next wake-up, which for a quiet agent may never come.

So every half second (half a heartbeat interval, if that is shorter) one query reads the
log's end for every workspace someone here follows. A sequence that was in the log a whole
period ago and that the bus has still not carried was missed: that workspace's readers
read the log again (``EventBus.catch_up``), each from where it is. Each sequence is checked,
not the highest one: an agent's socket hears only its own events, so a later event the bus
carried must not hide an earlier one for that agent that it never carried. Waiting a
period before calling a sequence missed leaves time for appends that have committed but not
yet been published. A downlink sent back to the log also checks whether its agent was
revoked. This one query replaces two by every agent socket every heartbeat interval, which
for 5,000 idle agents was two thousand queries a second.
"""

from __future__ import annotations

import logging

from hub.core.log.bus import DEFAULT_BUS, EventBus
from hub.core.store.models import Workspace
from hub.core.workers import Periodic

logger = logging.getLogger(__name__)

# One small query per process each time: cheap enough that a revocation or an answer made
# by another process reaches a socket within about a second.
LOG_WATCH_PERIOD_S = 0.5


class LogWatch:
    """``start`` looks every ``period_s`` until ``stop`` (see ``hub.core.periodic``)."""

    def __init__(self, period_s: float, bus: EventBus | None = None) -> None:
        self.period_s = period_s
        self.catch_ups = 0  # workspaces whose readers were sent back to the log
        self._bus = bus or DEFAULT_BUS
        self._logged: dict[str, int] = {}  # the log's end per workspace, one period ago
        self._job = Periodic("log watch", period_s, self.look)

    async def look(self) -> None:
        """Compare the log a period ago with what the bus carried since."""
        watched = self._bus.watched_workspaces()
        logged = dict(
            await Workspace.filter(id__in=watched).values_list("id", "last_sequence")
            if watched
            else []
        )
        for workspace_id, then in self._logged.items():
            if workspace_id not in logged:
                continue
            missed = self._bus.uncarried(workspace_id, then)
            if missed:
                logger.info(
                    "%s events of %s up to %s reached the log elsewhere", missed, workspace_id, then
                )
                self._bus.catch_up(workspace_id, then)
                self.catch_ups += 1
            else:
                self._bus.checked_through(workspace_id, then)
        self._logged = {ws: int(sequence) for ws, sequence in logged.items()}

    @property
    def running(self) -> bool:
        return self._job.running

    def start(self) -> None:
        self._job.start()

    async def stop(self) -> None:
        await self._job.stop()


__all__ = ["LOG_WATCH_PERIOD_S", "LogWatch"]
