"""Small statistics for benchmark samples: percentiles and rates, nothing more."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile; ``nan`` for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summary(samples_ms: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(samples_ms),
        "p50": percentile(samples_ms, 0.50),
        "p95": percentile(samples_ms, 0.95),
        "p99": percentile(samples_ms, 0.99),
    }


def ratio(value: float, floor: float) -> float:
    if not floor or math.isnan(value) or math.isnan(floor):
        return math.nan
    return value / floor
