"""An ordered, gap-free, repeat-free stream of one workspace's events: backlog, then live.

The bus is fast but only best effort: it can deliver out of sequence order (appends commit
in order but publish concurrently), drop a slow reader, or miss an event written by another
process. The log is the truth. ``WorkspaceFeed`` joins them:

1. it subscribes to the bus *before* reading the backlog, so nothing committed after the
   read can slip between the two;
2. it reads the log after the caller's sequence, page by page;
3. then it follows the bus, passing on an event only when it is the next sequence, skipping
   ones it already passed on, and reading any gap (N+2 arrived, N+1 did not) from the log —
   sequences commit in order, so everything up to a published sequence is already there;
4. when the bus drops it as too slow, it subscribes again and reads from the log.

Frames the bus carries with no sequence (``sequence <= 0``) are transient — text still
streaming in, say — and are passed on as they come; they are never in the log.

A ``view`` decides what the reader is shown of each event: it is handed each page read from
the log whole (one call for up to ``page_size`` events) and each live event alone. People
read the workspace through ``hub.core.work.sensitive_answers.people_feed``, whose view hides
sensitive answers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType

from hub.core.log.bus import DEFAULT_BUS, EventBus, PublishedEvent, SubscriberDropped, Subscription
from hub.core.log.envelopes import to_published
from hub.core.log.events import events_after

logger = logging.getLogger(__name__)

PAGE_SIZE = 500

View = Callable[[str, list[PublishedEvent]], Awaitable[list[PublishedEvent]]]
"""``view(workspace_id, events)``: the same events, in order, as the reader may see them."""


async def as_logged(workspace_id: str, events: list[PublishedEvent]) -> list[PublishedEvent]:
    return events


class WorkspaceFeed:
    """``async with WorkspaceFeed(ws, after) as feed: async for event in feed: ...``"""

    def __init__(
        self,
        workspace_id: str,
        after: int,
        *,
        bus: EventBus | None = None,
        page_size: int = PAGE_SIZE,
        view: View = as_logged,
    ) -> None:
        self.workspace_id = workspace_id
        self.last_sequence = after
        self.resyncs = 0  # times the bus dropped this reader and the log filled in
        self._bus = bus or DEFAULT_BUS
        self._page_size = page_size
        self._view = view
        self._subscription: Subscription | None = None

    async def __aenter__(self) -> WorkspaceFeed:
        self._subscribe()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def __aiter__(self) -> AsyncIterator[PublishedEvent]:
        return self._events()

    def _subscribe(self) -> Subscription:
        if self._subscription is not None:
            self._subscription.close()
        self._subscription = self._bus.subscribe(self.workspace_id, after=self.last_sequence)
        return self._subscription

    async def _events(self) -> AsyncIterator[PublishedEvent]:
        subscription = self._subscription or self._subscribe()
        async for event in self._from_log():
            yield event
        while True:
            try:
                published = await subscription.get()
            except SubscriberDropped as dropped:
                self.resyncs += 1
                if dropped.fell_behind:
                    logger.info(
                        "feed of %s fell behind at %s; reading the log",
                        self.workspace_id,
                        self.last_sequence,
                    )
                subscription = self._subscribe()
                async for event in self._from_log():
                    yield event
                continue
            if published.sequence <= 0:
                for shown in await self._view(self.workspace_id, [published]):
                    yield shown
            elif published.sequence == self.last_sequence + 1:
                self.last_sequence = published.sequence
                for shown in await self._view(self.workspace_id, [published]):
                    yield shown
            elif published.sequence > self.last_sequence:
                async for event in self._from_log():
                    yield event
            # else: already passed on (from the log, or a repeat): skip it.

    async def _from_log(self) -> AsyncIterator[PublishedEvent]:
        while True:
            page = await events_after(self.workspace_id, self.last_sequence, limit=self._page_size)
            for shown in await self._view(self.workspace_id, [to_published(r) for r in page]):
                self.last_sequence = shown.sequence
                yield shown
            if len(page) < self._page_size:
                return
