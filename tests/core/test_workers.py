"""The background jobs: a failed pass never ends them, and a wake is never lost."""

from __future__ import annotations

import asyncio
import logging

import pytest
from tortoise.exceptions import DBConnectionError

from hub.core.workers import OnDemand, Periodic


async def test_an_on_demand_job_outlives_a_database_outage_while_it_idles(
    caplog: pytest.LogCaptureFixture,
) -> None:
    passes = 0
    asked = 0
    second_pass = asyncio.Event()

    async def run_once() -> int:
        nonlocal passes
        passes += 1
        if passes == 2:
            second_pass.set()
        return 0

    async def next_due() -> float:
        # Asking when the next row is due reads the database too; the first time it is away.
        nonlocal asked
        asked += 1
        if asked == 1:
            raise DBConnectionError("connection refused")
        return 60.0

    job = OnDemand("test-job", run_once, next_due, retry_s=0.01)
    with caplog.at_level(logging.WARNING, logger="hub.core.workers"):
        job.start()
        try:
            await asyncio.wait_for(second_pass.wait(), 5)
        finally:
            await job.stop()
    assert job.running is False
    outage = [r for r in caplog.records if "test-job skipped" in r.getMessage()]
    assert outage and outage[0].levelno == logging.WARNING and outage[0].exc_info is None


async def test_a_wake_during_a_pass_runs_another_pass() -> None:
    first_pass_started = asyncio.Event()
    release_first_pass = asyncio.Event()
    second_pass = asyncio.Event()
    passes = 0

    async def run_once() -> int:
        nonlocal passes
        passes += 1
        if passes == 1:
            first_pass_started.set()
            await release_first_pass.wait()
        else:
            second_pass.set()
        return 0

    async def next_due() -> float:
        return 60.0  # only a wake brings the next pass this side of a minute

    job = OnDemand("test-job", run_once, next_due, retry_s=60.0)
    job.start()
    try:
        await asyncio.wait_for(first_pass_started.wait(), 5)
        job.wake()  # work committed while the first pass was already past it
        release_first_pass.set()
        await asyncio.wait_for(second_pass.wait(), 5)
    finally:
        await job.stop()


async def test_a_failing_periodic_run_is_logged_with_its_traceback_and_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs = 0
    second_run = asyncio.Event()

    async def work() -> None:
        nonlocal runs
        runs += 1
        if runs == 2:
            second_run.set()
        raise ValueError("a bug")

    job = Periodic("test-periodic", 0.01, work)
    with caplog.at_level(logging.WARNING, logger="hub.core.workers"):
        job.start()
        try:
            await asyncio.wait_for(second_run.wait(), 5)
        finally:
            await job.stop()
    failures = [r for r in caplog.records if "test-periodic failed" in r.getMessage()]
    assert failures and failures[0].levelno == logging.ERROR and failures[0].exc_info
