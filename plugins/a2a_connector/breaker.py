"""A circuit breaker per remote agent: a remote that is down is retried less and less often.

After ``threshold`` failures in a row the circuit opens: callers wait ``delay()`` before the
next try, doubling up to ``max_delay_s``; one success closes it. Shared by every task of
the remote, so ten tasks of a dead agent make one probe, not ten storms.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Breaker:
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    threshold: int = 1
    _failures: dict[str, int] = field(default_factory=dict)

    def failed(self, remote_id: str) -> float:
        """Count a failure; returns how long to wait before trying that remote again."""
        self._failures[remote_id] = self._failures.get(remote_id, 0) + 1
        return self.delay(remote_id)

    def succeeded(self, remote_id: str) -> None:
        self._failures.pop(remote_id, None)

    def delay(self, remote_id: str) -> float:
        failures = self._failures.get(remote_id, 0)
        if failures < self.threshold:
            return 0.0
        return min(self.base_delay_s * 2 ** (failures - self.threshold), self.max_delay_s)

    def is_open(self, remote_id: str) -> bool:
        return self._failures.get(remote_id, 0) >= self.threshold


__all__ = ["Breaker"]
