"""Which downlink events are handled: exactly once each, and where to resume after a restart.

The hub replays every event addressed to the agent after the ``lastSequence`` the agent
sends in its hello, so the same event may arrive twice (a replay after a reconnect, a frame
that crossed a dropped socket). Sequences are per workspace, so the agent sees a sparse
subset of them and cannot use gaps to detect loss; it relies on the hub's in-order replay.

The position sent back is the *watermark*: every event at or below it was handled to the
end. An event whose handler still runs (a task waiting hours for a person) holds the
watermark below it, so a restart replays it and the adapter resumes that work; events above
the watermark that did finish are remembered in ``handled`` and skipped when replayed.
"""

from __future__ import annotations

from collections.abc import Iterable


class DeliveryLedger:
    def __init__(self, watermark: int = 0, handled: Iterable[int] = ()) -> None:
        self.watermark = watermark
        self._handled = {s for s in handled if s > watermark}
        self._in_flight: set[int] = set()
        self._highest_seen = max([watermark, *self._handled])

    def begin(self, sequence: int) -> bool:
        """True if ``sequence`` is new and must be handled; False for a repeat."""
        if sequence <= self.watermark or sequence in self._handled or sequence in self._in_flight:
            return False
        self._in_flight.add(sequence)
        self._highest_seen = max(self._highest_seen, sequence)
        return True

    def finish(self, sequence: int) -> None:
        """The event was handled to the end. A handler interrupted by closing the adapter is
        never finished, so its event stays below the watermark and is replayed next run."""
        if sequence not in self._in_flight:
            return
        self._in_flight.discard(sequence)
        self._handled.add(sequence)
        self._advance()

    def reset(self, watermark: int) -> None:
        """After ``system.resync_required``: continue from ``watermark``, forget the rest."""
        self.watermark = watermark
        self._handled.clear()
        self._highest_seen = max([watermark, *self._in_flight])

    def _advance(self) -> None:
        ceiling = min(self._in_flight) - 1 if self._in_flight else self._highest_seen
        self.watermark = max(self.watermark, ceiling)
        self._handled = {s for s in self._handled if s > self.watermark}

    @property
    def handled(self) -> list[int]:
        """Handled sequences above the watermark (to persist)."""
        return sorted(self._handled)

    @property
    def in_flight(self) -> list[int]:
        return sorted(self._in_flight)
