"""Remote A2A task states → hub task statuses (seed 003, ARCHITECTURE.md), as one table.

Both protocol generations name the same states: v1.0 as protobuf enum names
(``TASK_STATE_INPUT_REQUIRED``), v0.3 as kebab-case strings (``input-required``).
``state_name`` turns either into the v0.3 spelling, which is what the ledger stores and
people see. A state outside the table (``unknown``, ``TASK_STATE_UNSPECIFIED``, a newer
protocol's state, garbage) maps to ``None``: the hub shows "unknown" and moves nothing.
"""

from __future__ import annotations

from typing import Any

from hub.core.task_states import TaskStatus

HUB_STATUS: dict[str, TaskStatus] = {
    "submitted": TaskStatus.RUNNING,
    "working": TaskStatus.RUNNING,
    "input-required": TaskStatus.WAITING_FOR_HUMAN,
    "auth-required": TaskStatus.WAITING_FOR_HUMAN,
    "completed": TaskStatus.SUCCEEDED,
    "failed": TaskStatus.FAILED,
    "rejected": TaskStatus.FAILED,
    "canceled": TaskStatus.CANCELLED,
}
UNKNOWN = "unknown"
FINAL_STATES = frozenset(
    s
    for s, status in HUB_STATUS.items()
    if status in {TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELLED}
)
_PREFIX = "TASK_STATE_"


def state_name(value: Any) -> str:
    """``TASK_STATE_AUTH_REQUIRED``, ``auth-required``, or a protobuf enum number → v0.3 name."""
    if isinstance(value, int) and not isinstance(value, bool):
        from a2a.types.a2a_pb2 import TaskState  # protobuf enum: number → name

        try:
            value = TaskState.Name(value)
        except ValueError:
            return UNKNOWN
    if not isinstance(value, str):
        return UNKNOWN
    name = value.strip()
    if name.upper().startswith(_PREFIX):
        name = name[len(_PREFIX) :].lower().replace("_", "-")
    name = name.lower()
    if name == "cancelled":  # the British spelling some servers send
        name = "canceled"
    return name if name in HUB_STATUS else UNKNOWN


def hub_status(value: Any) -> TaskStatus | None:
    """The hub status for a remote state, or ``None`` for a state the hub cannot place."""
    return HUB_STATUS.get(state_name(value))


__all__ = ["FINAL_STATES", "HUB_STATUS", "UNKNOWN", "hub_status", "state_name"]
