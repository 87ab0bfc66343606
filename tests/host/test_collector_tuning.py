"""The collector settings ``lineup serve`` applies once the hub has started."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hub.host.collector_tuning import YOUNG_GENERATION_THRESHOLD, tune_for_serving


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_collector")
def test_startup_objects_are_frozen_and_the_young_generation_waits_longer() -> None:
    built_at_startup = object.__new__(type("Startup", (), {}))
    _, middle, old = gc.get_threshold()

    tune_for_serving()

    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(built_at_startup)
    assert all(built_at_startup is not o for o in gc.get_objects())  # skipped by collections
    assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, middle, old)
