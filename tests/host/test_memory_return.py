"""Memory given back once a burst of concurrent work is over (``hub.host.memory_return``)."""

from __future__ import annotations

import gc
import weakref

from hub.host.memory_return import MemoryReturn


class Session:
    """A session of a socket long gone, still in a reference cycle."""

    def __init__(self) -> None:
        self.me = self


def test_memory_is_given_back_once_a_burst_is_over() -> None:
    tasks = [10]
    memory = MemoryReturn(burst_tasks=1000, count_tasks=lambda: tasks[0])
    gc.disable()  # only the return may collect the cycle below
    try:
        garbage = Session()
        gone = weakref.ref(garbage)
        del garbage
        for count in (10, 900, 3000, 6000):  # the storm comes
            tasks[0] = count
            assert not memory.look()
        tasks[0] = 4000  # most are still there
        assert not memory.look()
        assert gone() is not None  # nothing collected it yet
        tasks[0] = 40  # the storm has passed
        assert memory.look()
        assert gone() is None and memory.returns == 1
        assert not memory.look()  # once per burst
        tasks[0] = 600  # ordinary traffic, up and down: no burst
        assert not memory.look()
        tasks[0] = 20
        assert not memory.look()
    finally:
        gc.enable()


async def test_it_runs_in_the_background_until_stopped() -> None:
    memory = MemoryReturn(period_s=0.01)
    memory.start()
    await memory.stop()
    assert memory.returns == 0
