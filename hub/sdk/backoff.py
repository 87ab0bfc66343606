"""Reconnect delays: exponential growth with full jitter.

Full jitter (a uniform draw between zero and the exponential cap) spreads a crowd of agents
that lost the hub at the same moment, so they do not all knock again at the same instant
when it comes back (the "thundering herd").
"""

from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    def __init__(
        self,
        initial_s: float = 0.5,
        maximum_s: float = 30.0,
        factor: float = 2.0,
        draw: Callable[[float, float], float] = random.uniform,
    ) -> None:
        if initial_s <= 0 or maximum_s < initial_s or factor < 1:
            raise ValueError("need 0 < initial_s <= maximum_s and factor >= 1")
        self.initial_s = initial_s
        self.maximum_s = maximum_s
        self.factor = factor
        self._draw = draw
        self.attempt = 0

    def cap(self) -> float:
        """The longest the next wait may be."""
        growth = self.factor ** min(self.attempt, 64)  # bounded: no float overflow
        return min(self.maximum_s, self.initial_s * growth)

    def next_delay(self) -> float:
        delay = self._draw(0.0, self.cap())
        self.attempt += 1
        return delay

    def reset(self) -> None:
        """After a connection that worked: the next failure waits briefly again."""
        self.attempt = 0
