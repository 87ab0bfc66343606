"""The hub's background jobs: one that runs every so often, one that runs when there is work.

Both run in every hub process until stopped (call ``stop`` before the database closes), and
both treat a failed run alike: the database being briefly away (a ``storage_fault``) is a
warning, anything else a traceback, and the job tries again later instead of ending.

- ``Periodic`` runs ``work`` at once and then every ``period_s``; ``stop`` waits for the run
  in progress.
- ``OnDemand`` runs passes while they find something to do, then sleeps until ``wake`` is
  called (a commit that may have made work) or the moment its ``next_due`` names, whichever
  comes first; ``stop`` cancels it. The outbox and the policy clock are such jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from hub.core.store.storage_faults import storage_fault

logger = logging.getLogger(__name__)


def _log_failure(name: str, error: Exception) -> None:
    if storage_fault(error) is None:
        logger.exception("%s failed; trying again", name)
    else:
        logger.warning("%s skipped: %s", name, error)


class Periodic:
    def __init__(self, name: str, period_s: float, work: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self.period_s = period_s
        self._work = work
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        # A task that ended by itself (it never should) counts as stopped: /readyz says so.
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None:
            await self._task
            self._task = None

    async def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self._work()
            except Exception as error:  # a database hiccup must not end the job for good
                _log_failure(self.name, error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.period_s)


class OnDemand:
    """``run_once`` returns how much it handled; ``next_due`` how long to sleep when idle."""

    def __init__(
        self,
        name: str,
        run_once: Callable[[], Awaitable[int]],
        next_due: Callable[[], Awaitable[float]],
        *,
        retry_s: float,
    ) -> None:
        self.name = name
        self.retry_s = retry_s  # the sleep after a failed pass
        self._run_once = run_once
        self._next_due = next_due
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        # A task that ended by itself (it never should) counts as stopped: /readyz says so.
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        """Run a pass now (or as soon as the one in progress ends)."""
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            # Cleared before the pass: a wake during it means the pass may have missed work.
            self._wake.clear()
            try:
                if await self._run_once():
                    continue
                # Asked before wait() exists, so a cancel here leaks no waiter.
                timeout = await self._next_due()
            except Exception as error:  # the database may be briefly away: try again later
                _log_failure(self.name, error)
                timeout = self.retry_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)


__all__ = ["OnDemand", "Periodic"]
