"""Counting failed attempts at guessing a secret, per source and overall.

A pairing code is short (8 characters of base32: about 10^12 values), so what keeps it from
being guessed in its 10 minutes is a cap on failed tries. Two caps hold at once: one per
source address, so a single client is slowed down fast, and one overall, so an attacker
spreading guesses over many addresses still gets only a few hundred tries a minute.

Counts live in this process's memory: with several hub processes each keeps its own, so
the overall cap is per process. That still leaves the code space out of reach; sharing the
counts through the database would put a write on every failed attempt for little gain.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from hub.core.errors import RateLimited


class FailureLimiter:
    """A sliding window of failed attempts; ``check`` refuses once a cap is reached."""

    def __init__(
        self,
        *,
        per_source: int,
        overall: int,
        window_s: float,
        max_sources: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        code: str = "rate_limited",
        what: str = "attempts",
    ) -> None:
        self.per_source = per_source
        self.overall = overall
        self.window_s = window_s
        self.max_sources = max_sources
        self.code = code
        self.what = what
        self._clock = clock
        self._by_source: OrderedDict[str, deque[float]] = OrderedDict()
        self._all: deque[float] = deque()

    def check(self, source: str | None) -> None:
        """Raise ``RateLimited`` if ``source`` (or everyone together) failed too often."""
        now = self._clock()
        self._forget(self._all, now)
        if len(self._all) >= self.overall:
            self._refuse(self._all, now, "from all sources together")
        if source is None:
            return
        failures = self._by_source.get(source)
        if failures is not None:
            self._forget(failures, now)
            if len(failures) >= self.per_source:
                self._refuse(failures, now, "from your address")

    def record_failure(self, source: str | None) -> None:
        now = self._clock()
        self._all.append(now)
        if source is None:
            return
        failures = self._by_source.pop(source, None) or deque()
        failures.append(now)
        self._by_source[source] = failures  # most recently failing sources stay at the end
        while len(self._by_source) > self.max_sources:
            self._by_source.popitem(last=False)

    def reset(self) -> None:
        self._by_source.clear()
        self._all.clear()

    def _forget(self, failures: deque[float], now: float) -> None:
        while failures and failures[0] <= now - self.window_s:
            failures.popleft()

    def _refuse(self, failures: deque[float], now: float, scope: str) -> None:
        retry_after = max(1, math.ceil(failures[0] + self.window_s - now))
        raise RateLimited(
            f"Too many failed {self.what} {scope}; try again in {retry_after} s.",
            code=self.code,
            hint=f"Wait {retry_after} seconds, and check the value before trying again.",
            retryAfterS=retry_after,
        )
