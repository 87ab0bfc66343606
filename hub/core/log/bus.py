"""In-process publish/subscribe of committed events.

The event log in the database is the truth; the bus only tells live readers (agent sockets,
browser sockets, channels) that something new is there, fast. Publishing never waits:
each subscriber has a bounded queue, and one that falls behind is dropped and handed the
sequence to resync from, so a stuck browser can never slow an agent down.

Delivery through the bus is best effort and may arrive out of sequence order (two appends
commit in order but publish concurrently); ``hub.core.log.feed`` turns it into an ordered,
gap-free stream by reading any gap from the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishedEvent:
    """What the bus carries: the event as the log holds it, ready to send."""

    workspace_id: str
    sequence: int
    type: str
    recipient_agent_id: str | None
    envelope: dict[str, Any]
    relayed: bool = False  # came from another hub process (see hub.core.log.relay)
    # The one agent this event is for, if any (its recipient, or the agent it revokes): only
    # that agent's subscriptions are offered it (see ``EventBus.subscribe``).
    addressee: str | None = None
    _text: str | None = field(default=None, compare=False, repr=False)

    def text(self) -> str:
        """The envelope as compact JSON, serialised once however many sockets send it
        (a fan-out to a thousand browsers used to serialise it a thousand times)."""
        text = self._text
        if text is None:
            text = json.dumps(self.envelope, separators=(",", ":"), ensure_ascii=False)
            object.__setattr__(self, "_text", text)  # a cache, not a change of the event
        return text


class BusClosing(Exception):
    """The process is shutting down: the reader should close its socket (1012)."""


class SubscriberDropped(Exception):
    """The subscriber must read the log from ``resync_from`` on: it fell behind, or
    (``fell_behind`` False) the log holds events this bus never carried."""

    def __init__(self, resync_from: int, *, fell_behind: bool = True) -> None:
        why = "fell behind" if fell_behind else "missed events written elsewhere"
        super().__init__(f"subscriber {why}; resync after sequence {resync_from}")
        self.resync_from = resync_from
        self.fell_behind = fell_behind


_DROPPED = object()
_MISSED = object()
_CLOSING = object()


@dataclass(eq=False)
class Subscription:
    workspace_id: str
    accepts: Callable[[PublishedEvent], bool]
    _queue: asyncio.Queue[object]
    _bus: EventBus
    addressee: str | None = None
    last_sequence: int = 0
    dropped: bool = field(default=False)

    async def get(self) -> PublishedEvent:
        """The next event. Raises ``SubscriberDropped`` once the subscriber must read the log
        instead, ``BusClosing`` once the process is shutting down."""
        return self._taken(await self._queue.get())

    def get_nowait(self) -> PublishedEvent | None:
        try:
            item = self._queue.get_nowait()
        except asyncio.QueueEmpty:
            return None
        return self._taken(item)

    def _taken(self, item: object) -> PublishedEvent:
        if item is _CLOSING:
            raise BusClosing()
        if item is _DROPPED or item is _MISSED:
            raise SubscriberDropped(self.last_sequence, fell_behind=item is _DROPPED)
        assert isinstance(item, PublishedEvent)
        self.last_sequence = max(self.last_sequence, item.sequence)
        return item

    def close(self) -> None:
        self._bus._remove(self)

    def _offer(self, event: PublishedEvent) -> bool:
        try:
            self._queue.put_nowait(event)
            return True
        except asyncio.QueueFull:
            return False

    def _drop(self, marker: object = _DROPPED) -> None:
        self.dropped = True
        # Make room for the marker so the reader wakes and learns it must resync.
        while True:
            try:
                self._queue.get_nowait()
            except asyncio.QueueEmpty:
                break
        self._queue.put_nowait(marker)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _accept_all(event: PublishedEvent) -> bool:
    return True


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self.queue_size = queue_size
        self._subscribers: dict[str, set[Subscription]] = defaultdict(set)
        # Who is offered what: subscriptions to a whole workspace, and those to the events of
        # one addressee in it. A hundred agent sockets in one workspace used to be offered
        # every event each, to pass on one in a hundred.
        self._whole: dict[str, set[Subscription]] = defaultdict(set)
        self._addressed: dict[tuple[str, str], set[Subscription]] = defaultdict(set)
        self._listeners: list[Callable[[PublishedEvent], None]] = []
        # Per workspace, the highest sequence published or caught up with (``catch_up``).
        self._highest: dict[str, int] = {}
        # What this bus carried of each workspace someone here follows, for the log watch
        # (``hub.core.log.watch``): every sequence up to the floor was carried, checked, or
        # committed before anyone here followed the workspace (a new reader reads those from
        # the log itself), and the set holds those carried above it. A set, not a highest
        # mark: an agent's socket hears only its own events, so a later event the bus
        # carried says nothing of an earlier one it missed. The watch raises the floor every
        # period, which keeps the set to about a period's events.
        self._floor: dict[str, int] = {}
        self._carried: dict[str, set[int]] = {}

    def subscribe(
        self,
        workspace_id: str,
        *,
        accepts: Callable[[PublishedEvent], bool] = _accept_all,
        after: int = 0,
        queue_size: int | None = None,
        addressee: str | None = None,
    ) -> Subscription:
        """Events of ``workspace_id`` that ``accepts`` takes; with ``addressee``, only those
        whose ``addressee`` it is."""
        subscription = Subscription(
            workspace_id=workspace_id,
            accepts=accepts,
            _queue=asyncio.Queue(maxsize=(queue_size or self.queue_size) + 1),
            _bus=self,
            addressee=addressee,
            last_sequence=after,
        )
        if workspace_id not in self._subscribers:  # followed here from now on
            # Unknown to this bus (a process just started): 0, so the watch's first look
            # sends the readers to the log once rather than take its end as delivered.
            self._floor[workspace_id] = self._highest.get(workspace_id, 0)
            self._carried[workspace_id] = set()
        self._subscribers[workspace_id].add(subscription)
        if addressee is None:
            self._whole[workspace_id].add(subscription)
        else:
            self._addressed[workspace_id, addressee].add(subscription)
        return subscription

    def add_listener(self, listener: Callable[[PublishedEvent], None]) -> None:
        """A synchronous hook called for every event of every workspace (channels, metrics)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[PublishedEvent], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def publish(self, event: PublishedEvent) -> None:
        if event.sequence > self._highest.get(event.workspace_id, 0):
            self._highest[event.workspace_id] = event.sequence
        carried = self._carried.get(event.workspace_id)
        if carried is not None and event.sequence > 0:
            carried.add(event.sequence)
        offered = list(self._whole.get(event.workspace_id, ()))
        if event.addressee is not None:
            offered += self._addressed.get((event.workspace_id, event.addressee), ())
        for subscription in offered:
            if not subscription.accepts(event):
                continue
            # One slot stays free for the drop marker, hence the -1.
            if subscription._queue.qsize() >= subscription._queue.maxsize - 1:
                logger.warning(
                    "dropping slow subscriber of %s at sequence %s",
                    event.workspace_id,
                    subscription.last_sequence,
                )
                self._remove(subscription)
                subscription._drop()
                continue
            subscription._offer(event)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken listener must not stop delivery to the others
                logger.exception("event listener failed")

    def watched_workspaces(self) -> list[str]:
        """The workspaces someone here is subscribed to."""
        return list(self._subscribers)

    def uncarried(self, workspace_id: str, logged: int) -> int:
        """How many sequences of ``workspace_id`` up to ``logged`` this bus neither carried
        nor was told to count as checked (``checked_through``); none before the first."""
        floor = self._floor.get(workspace_id)
        if floor is None or logged <= floor:
            return 0
        carried = self._carried.get(workspace_id, set())
        return sum(1 for sequence in range(floor + 1, logged + 1) if sequence not in carried)

    def checked_through(self, workspace_id: str, logged: int) -> None:
        """Every sequence of ``workspace_id`` up to ``logged`` was carried, or its readers
        were sent to the log for it: forget them."""
        if workspace_id not in self._floor:
            return
        floor = max(logged, self._floor[workspace_id])
        self._floor[workspace_id] = floor
        carried = self._carried.get(workspace_id)
        if carried:
            self._carried[workspace_id] = {s for s in carried if s > floor}

    def catch_up(self, workspace_id: str, logged: int) -> None:
        """The log of ``workspace_id`` holds events up to ``logged`` that this bus never
        carried (written by a process it does not hear from): every subscriber of it reads
        the log again from where it is, as if dropped, and those events count as dealt with
        for whoever follows the workspace next."""
        self._highest[workspace_id] = max(logged, self._highest.get(workspace_id, 0))
        for subscription in list(self._subscribers.get(workspace_id, ())):
            self._remove(subscription)
            subscription._drop(_MISSED)

    def close_subscribers(self) -> None:
        """The process is shutting down: every reader wakes with ``BusClosing``, to close its
        socket now rather than be held open until the server gives up on it."""
        for subscribers in list(self._subscribers.values()):
            for subscription in list(subscribers):
                self._remove(subscription)
                subscription._drop(_CLOSING)

    def subscriber_count(self, workspace_id: str | None = None) -> int:
        if workspace_id is not None:
            return len(self._subscribers.get(workspace_id, ()))
        return sum(len(s) for s in self._subscribers.values())

    def addressed_subscriber_count(self) -> int:
        """Subscriptions for one agent each (an agent's socket); the rest follow a whole
        workspace (a browser's socket, a feed)."""
        return sum(len(s) for s in self._addressed.values())

    def _remove(self, subscription: Subscription) -> None:
        workspace_id = subscription.workspace_id
        _discard(self._subscribers, workspace_id, subscription)
        if workspace_id not in self._subscribers:  # followed by no one here any more
            self._floor.pop(workspace_id, None)
            self._carried.pop(workspace_id, None)
        if subscription.addressee is None:
            _discard(self._whole, workspace_id, subscription)
        else:
            _discard(self._addressed, (workspace_id, subscription.addressee), subscription)


def _discard(index: dict[Any, set[Subscription]], key: Any, subscription: Subscription) -> None:
    subscribers = index.get(key)
    if subscribers is not None:
        subscribers.discard(subscription)
        if not subscribers:
            del index[key]


DEFAULT_BUS = EventBus()
"""The process's bus. The app sizes its queues at start; tests may pass their own."""
