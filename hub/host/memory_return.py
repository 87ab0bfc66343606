"""Memory given back to the system once a burst of concurrent work is over.

Two thousand agents reconnecting at once raise the hub by about 110 MiB (a socket's state
in hypercorn, Quart and the session, some 55 KiB each), and when they have gone again the
process kept it all. What held it, measured (``benchmarks/RESULTS.md``, "Big workspaces"):

* Not live objects. A minute after the storm the objects Python tracks are back to within a
  megabyte of before it; caches replaced entries meanwhile (SQLite's prepared statements,
  the interpreter's attribute cache), that is all.
* The sessions' garbage caught in reference cycles, promoted to the oldest generation while
  they lived (a session lives seconds), waits for a full collection, which a quiet hub may
  not run for a long time (``hub.host.collector_tuning`` makes collections rarer still).
* CPython's allocator for small objects takes memory from the system in arenas of 1 MiB and
  gives an arena back only once every object in it is freed. The few survivors of a storm
  (those cache entries) are spread over most of the arenas it took: after it, 172 arenas
  held 68 MiB of objects, against 67 arenas before.
* The C library's heap (the larger buffers) returns what it freed only from its top, and
  only when asked for the rest (``malloc_trim``).

``MemoryReturn`` watches how many tasks the event loop holds (each socket has a few). When
they have fallen well below their highest since the last look, the burst is over: it runs
a full collection, then asks the C library to give back every free page. Against the arenas
it can do nothing, which is why ``lineup serve`` runs with ``PYTHONMALLOC=malloc``
(``hub.cli``): small objects come from the C library's heap too, and the trim gives most of
the storm back.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import sys
import time
from collections.abc import Callable

from hub.core.workers import Periodic

logger = logging.getLogger(__name__)

# Often enough to see a storm's height (one lasts seconds), cheap enough to do always: a
# look lists the loop's tasks, about a millisecond with ten thousand of them.
CHECK_PERIOD_S = 1.0
# A burst is over once the loop holds this many tasks fewer than at its height, and at
# most half as many: a few hundred sockets coming and going is the normal traffic of a hub.
BURST_TASKS = 1000


def _trimmer() -> Callable[[], int] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: int(trim(0))


class MemoryReturn:
    """Gives memory back after a burst; ``start`` in the serving loop, ``stop`` before it ends."""

    def __init__(
        self,
        *,
        period_s: float = CHECK_PERIOD_S,
        burst_tasks: int = BURST_TASKS,
        count_tasks: Callable[[], int] | None = None,
    ) -> None:
        self.burst_tasks = burst_tasks
        self._count = count_tasks or (lambda: len(asyncio.all_tasks()))
        self._trim = _trimmer()
        self._highest = 0
        self.returns = 0  # how many times it gave memory back
        self._job = Periodic("memory return", period_s, self._look)

    def start(self) -> None:
        self._job.start()

    async def stop(self) -> None:
        await self._job.stop()

    async def _look(self) -> None:
        self.look()

    def look(self) -> bool:
        """Note the loop's tasks; give memory back if a burst just ended. True if it did."""
        now = self._count()
        self._highest = max(self._highest, now)
        if self._highest - now < self.burst_tasks or now > self._highest // 2:
            return False
        started = time.perf_counter()
        freed = gc.collect()
        if self._trim is not None:
            self._trim()
        logger.info(
            "a burst of %d tasks ended (%d now): %d objects collected, memory returned in %.0f ms",
            self._highest,
            now,
            freed,
            (time.perf_counter() - started) * 1000,
        )
        self._highest = now
        self.returns += 1
        return True


__all__ = ["BURST_TASKS", "CHECK_PERIOD_S", "MemoryReturn"]
