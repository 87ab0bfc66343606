"""The remote-state table, every value, in both protocol spellings."""

from __future__ import annotations

import pytest
from a2a.types.a2a_pb2 import TaskState

from hub.core.task_states import TaskStatus
from plugins.a2a_connector.states import HUB_STATUS, UNKNOWN, hub_status, state_name

EXPECTED = {
    "submitted": TaskStatus.RUNNING,
    "working": TaskStatus.RUNNING,
    "input-required": TaskStatus.WAITING_FOR_HUMAN,
    "auth-required": TaskStatus.WAITING_FOR_HUMAN,
    "completed": TaskStatus.SUCCEEDED,
    "failed": TaskStatus.FAILED,
    "rejected": TaskStatus.FAILED,
    "canceled": TaskStatus.CANCELLED,
}


def test_the_table_is_the_seeds() -> None:
    assert HUB_STATUS == EXPECTED


@pytest.mark.parametrize("name", TaskState.keys())
def test_every_v1_enum_value_maps_by_name_and_by_number(name: str) -> None:
    v03 = name.removeprefix("TASK_STATE_").lower().replace("_", "-")
    expected = EXPECTED.get(v03)  # TASK_STATE_UNSPECIFIED → unknown
    assert hub_status(name) == expected
    assert hub_status(TaskState.Value(name)) == expected
    assert state_name(name) == (v03 if expected else UNKNOWN)


@pytest.mark.parametrize("name", [*EXPECTED, "unknown"])
def test_every_v03_string_maps(name: str) -> None:
    assert hub_status(name) == EXPECTED.get(name)


@pytest.mark.parametrize(
    "garbage",
    ["unknown", "", "COMPLETED!", "<b>completed</b>", None, 7.5, 999, ["working"], {}, True],
)
def test_anything_else_is_unknown_and_moves_nothing(garbage: object) -> None:
    assert state_name(garbage) == UNKNOWN
    assert hub_status(garbage) is None


def test_the_british_spelling_is_cancelled_too() -> None:
    assert hub_status("cancelled") == TaskStatus.CANCELLED
