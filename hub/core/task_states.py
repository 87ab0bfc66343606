"""The task state machine of spec §6.2, defined once. Everything else asks it.

    queued ──▶ running ──▶ waiting_for_human
      │          │  ▲            │
      │          │  └────────────┤
      ▼          ▼               ▼
  cancelled ◀── (running) ──▶ succeeded / failed     (waiting_for_human ──▶ cancelled)

A cancel *request* is not a state: it is recorded on the task and sent to the agent; only the
agent's confirmation (or the timeout policy) moves the task to ``cancelled``.
"""

from __future__ import annotations

from enum import StrEnum

from hub.core.errors import IllegalTransition


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING_FOR_HUMAN = "waiting_for_human"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


ALLOWED_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.QUEUED: frozenset({TaskStatus.RUNNING, TaskStatus.CANCELLED}),
    TaskStatus.RUNNING: frozenset(
        {
            TaskStatus.WAITING_FOR_HUMAN,
            TaskStatus.SUCCEEDED,
            TaskStatus.FAILED,
            TaskStatus.CANCELLED,
        }
    ),
    TaskStatus.WAITING_FOR_HUMAN: frozenset({TaskStatus.RUNNING, TaskStatus.CANCELLED}),
    TaskStatus.SUCCEEDED: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.CANCELLED: frozenset(),
}

TERMINAL_STATUSES = frozenset(s for s, targets in ALLOWED_TRANSITIONS.items() if not targets)
ACTIVE_STATUSES = frozenset(TaskStatus) - TERMINAL_STATUSES


def parse_status(value: str) -> TaskStatus:
    try:
        return TaskStatus(value)
    except ValueError:
        known = ", ".join(s.value for s in TaskStatus)
        raise IllegalTransition(
            f"{value!r} is not a task status.", hint=f"Use one of: {known}.", code="unknown_status"
        ) from None


def is_allowed(current: TaskStatus, target: TaskStatus) -> bool:
    return target in ALLOWED_TRANSITIONS[current]


def check_transition(current: str, target: str) -> TaskStatus:
    """Return ``target`` as a status if the move is allowed, else raise ``IllegalTransition``."""
    source, destination = parse_status(current), parse_status(target)
    if is_allowed(source, destination):
        return destination
    allowed = ", ".join(sorted(ALLOWED_TRANSITIONS[source])) or "none: the task has ended"
    raise IllegalTransition(
        f"A task cannot go from {source} to {destination}.",
        hint=f"From {source} the allowed moves are: {allowed}.",
        current=source.value,
        requested=destination.value,
    )
