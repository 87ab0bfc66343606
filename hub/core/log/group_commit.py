"""Group commit: requests that arrive while one transaction runs share the next one.

A durable append costs a transaction, and a commit costs a disk flush (PostgreSQL with
fsync on; SQLite's write lock). Appends to one workspace are serialised anyway (they take
its sequence counter), so a hundred agents writing at once would queue for a hundred
commits in a row. Here, per key (a workspace), at most one writer runs: it takes every
request waiting when it starts — up to ``max_batch`` — and hands them to ``write`` as one
batch; what arrives meanwhile waits for the next batch. Under light load a batch is one
request and nothing waits; under heavy load one flush serves many appends.

Within a key, a batch is not first come, first served. A request may name its ``source``
(an agent, say): sources take turns, one request each, so an agent with a thousand frames
in flight fills a batch no more than one with two. And an ``urgent`` request (a person's)
goes before every other waiting one: it waits for the batch being written, never for the
queue behind it. One source's requests keep their order; requests of different sources were
concurrent anyway, so any order between them is one that could have happened.

Reads batch the same way where many callers ask at once for rows of one shape (a storm of
hellos, each looking up its agent and its workspace): the "write" is then one query for
the whole batch, run after every request in it was made, so none reads older rows than it
would have alone.

``write`` must settle every request's future (result or exception) and return only after
the batch is durable, so no caller learns of success early. A caller that is cancelled
before its batch starts is dropped from it; one cancelled later gets no answer, but its
request completes (callers resend by idempotency key, so that is safe).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(eq=False)
class Request(Generic[T]):
    """One caller's part of a batch: what to do, and where its answer goes."""

    work: T
    future: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def settle(self, result: Any) -> None:
        if not self.future.done():
            self.future.set_result(result)

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)


Writer = Callable[[Hashable, list[Request[T]]], Awaitable[None]]


class GroupCommit(Generic[T]):
    def __init__(self, write: Writer[T], *, max_batch: int = 200) -> None:
        self._write = write
        self.max_batch = max_batch
        self.batches_written = 0  # how much sharing happens: requests / batches
        self.requests_written = 0
        # Per event loop: a test suite runs many loops in one process, and a queue or a
        # writer task must never outlive the loop its futures belong to.
        self._state: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[Hashable, _Lane[T]]
        ] = weakref.WeakKeyDictionary()

    async def submit(self, key: Hashable, work: T) -> Any:
        """Queue ``work`` under ``key``; returns (or raises) what the writer settled on."""
        return await self.enqueue(key, work)

    def enqueue(
        self, key: Hashable, work: T, *, source: Hashable = None, urgent: bool = False
    ) -> asyncio.Future[Any]:
        """Queue ``work`` under ``key`` now, behind what ``source`` queued before it (and,
        if ``urgent``, before everything else waiting); the future settles when its batch
        is durable. A caller that must keep its own order (an agent's frames) enqueues one
        after another from one source and awaits the futures later."""
        loop = asyncio.get_running_loop()
        lanes = self._state.setdefault(loop, {})
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _Lane()
        request: Request[T] = Request(work)
        # A caller may stop waiting (a socket that closed); its failure is then nobody's
        # to read, and asyncio would log it as "never retrieved".
        request.future.add_done_callback(_mark_seen)
        lane.add(request, source, urgent)
        if lane.writer is None:
            lane.writer = loop.create_task(self._drain(key, lane, lanes))
        return request.future

    async def _drain(self, key: Hashable, lane: _Lane[T], lanes: dict[Hashable, _Lane[T]]) -> None:
        try:
            while lane:
                batch = lane.take(self.max_batch)
                if not batch:
                    continue
                self.batches_written += 1
                self.requests_written += len(batch)
                try:
                    await self._write(key, batch)
                except BaseException as error:
                    for request in batch:
                        request.fail(error)
                    if isinstance(error, asyncio.CancelledError):
                        raise
                    logger.exception("a group commit of %d request(s) failed", len(batch))
        except asyncio.CancelledError:
            for request in lane.drop_all():  # the loop is ending: nothing more is written
                request.fail(asyncio.CancelledError())
            raise
        finally:
            lane.writer = None
            if not lane and lanes.get(key) is lane:
                del lanes[key]


def _mark_seen(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


@dataclass(eq=False)
class _Lane(Generic[T]):
    """What waits under one key: the urgent requests, and each source's, in turn."""

    urgent: deque[Request[T]] = field(default_factory=deque)
    # Sources in the order they take their next turn; each with its requests in order.
    sources: dict[Hashable, deque[Request[T]]] = field(default_factory=dict)
    writer: asyncio.Task[None] | None = None

    def __bool__(self) -> bool:
        return bool(self.urgent or self.sources)

    def add(self, request: Request[T], source: Hashable, urgent: bool) -> None:
        if urgent:
            self.urgent.append(request)
        else:
            self.sources.setdefault(source, deque()).append(request)

    def take(self, most: int) -> list[Request[T]]:
        """The next batch: urgent requests first, then one request per source in turn.
        A source served goes to the back of the turn, so the next batch starts with the
        ones this one did not reach. Requests whose callers gave up are dropped."""
        batch: list[Request[T]] = []
        while self.urgent and len(batch) < most:
            _add_live(batch, self.urgent.popleft())
        while self.sources and len(batch) < most:
            source = next(iter(self.sources))
            waiting = self.sources.pop(source)
            _add_live(batch, waiting.popleft())
            if waiting:
                self.sources[source] = waiting  # re-inserted: now last in turn
        return batch

    def drop_all(self) -> list[Request[T]]:
        dropped = [*self.urgent, *(r for waiting in self.sources.values() for r in waiting)]
        self.urgent.clear()
        self.sources.clear()
        return dropped


def _add_live(batch: list[Request[T]], request: Request[T]) -> None:
    if not request.future.done():  # its caller gave up before its batch started
        batch.append(request)


__all__ = ["GroupCommit", "Request"]
