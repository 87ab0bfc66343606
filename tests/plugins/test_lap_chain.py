"""``then``: the answer to a frame worked out when its commit settles."""

from __future__ import annotations

import asyncio

import pytest

from plugins.lap_gateway.chain import then


async def test_a_result_is_made_into_the_answer() -> None:
    source: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    answer = then(source, lambda n: n * 10)
    assert not answer.done()
    source.set_result(4)
    assert await answer == 40


async def test_a_failure_is_answered_by_fail_or_passed_on() -> None:
    loop = asyncio.get_running_loop()
    refused, passed_on = loop.create_future(), loop.create_future()
    mapped = then(refused, lambda n: n, lambda error: f"refused: {error}")
    failing = then(passed_on, lambda n: n)
    refused.set_exception(ValueError("no"))
    passed_on.set_exception(ValueError("no"))
    assert await mapped == "refused: no"
    with pytest.raises(ValueError, match="no"):
        await failing


async def test_an_error_in_make_becomes_the_answers() -> None:
    source: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    answer = then(source, lambda n: 1 // n)
    source.set_result(0)
    with pytest.raises(ZeroDivisionError):
        await answer


async def test_cancelling_the_answer_leaves_the_source_and_the_reverse_cancels() -> None:
    loop = asyncio.get_running_loop()
    source: asyncio.Future[int] = loop.create_future()
    answer = then(source, lambda n: n)
    answer.cancel()
    source.set_result(1)
    await asyncio.sleep(0)
    assert source.result() == 1 and answer.cancelled()
    other: asyncio.Future[int] = loop.create_future()
    follower = then(other, lambda n: n)
    other.cancel()
    await asyncio.sleep(0)
    assert follower.cancelled()
