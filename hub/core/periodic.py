"""A background job that runs every so often until it is stopped.

``start`` runs ``work`` at once and then every ``period_s`` in a task of its own; ``stop``
waits for the run in progress (call it before the database closes). A run that fails is
logged and the next period tries again: the database being briefly away (a
``storage_fault``) is a warning, anything else a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from hub.core.store.storage_faults import storage_fault

logger = logging.getLogger(__name__)


class Periodic:
    def __init__(self, name: str, period_s: float, work: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self.period_s = period_s
        self._work = work
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None

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
                if storage_fault(error) is None:
                    logger.exception("%s failed; trying again", self.name)
                else:
                    logger.warning("%s skipped: %s", self.name, error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.period_s)


__all__ = ["Periodic"]
