"""The one clock of the hub and its agents: aware UTC moments, and how the wire writes them.

Every moment the hub stores or sends is timezone-aware UTC (``utcnow``); on the wire it is
ISO 8601 with a ``Z`` (``wire_time``). The SDK and the hub share this module, so both ends
stamp and parse time alike.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def wire_time(moment: datetime) -> str:
    """A moment as the wire writes it: ISO 8601 in UTC with a ``Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def iso(moment: datetime | None) -> str | None:
    """``wire_time``, or None where there is no moment (a task not yet finished)."""
    return None if moment is None else wire_time(moment)


__all__ = ["iso", "utcnow", "wire_time"]
