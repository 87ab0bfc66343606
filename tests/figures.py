"""The figures a run proves things with: frames fuzzed, API cases tried, faults injected,
events verified. Suites add to them as they go; ``tests/conftest.py`` prints them as the
run's last line, so a green run also says how much it actually exercised."""

from __future__ import annotations

from collections import Counter

FRAMES_FUZZED = "frames fuzzed"
API_CASES = "API cases tried"
FAULTS_INJECTED = "faults injected"
EVENTS_VERIFIED = "events verified"

ORDER = (FRAMES_FUZZED, API_CASES, FAULTS_INJECTED, EVENTS_VERIFIED)

_counts: Counter[str] = Counter()


def record(figure: str, amount: int = 1) -> None:
    _counts[figure] += amount


def summary() -> str:
    return ", ".join(f"{_counts[name]} {name}" for name in ORDER)
