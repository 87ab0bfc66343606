"""The outbox worker: delivers notification rows, retrying with backoff until they go out.

An outage of SMTP or of the Bot API delays a notification and never loses it: a row stays
``pending`` and is tried again after an exponentially growing delay (with jitter, capped),
for as long as it takes. Only an error the deliverer marks permanent (``DeliveryRefused``:
the person unlinked the account, say) ends a row as ``failed``.

The core knows nothing of channels: it hands each due row to a ``Deliverer`` the channel
layer provides, which returns what became of it.

Claiming. A worker claims a batch by stamping ``claimed_until`` (a lease) in a short
transaction, then delivers outside it, so a slow SMTP server never holds a database lock.
On PostgreSQL the claim reads with ``FOR UPDATE SKIP LOCKED``, so several hub processes
(issue 9, scale-out) can run a worker each and never take the same row; a worker that dies
mid-batch loses its lease and the rows come back. SQLite ignores the row lock, but it
serialises writers, and one process runs one worker. A batch can outlast its lease (a slow
SMTP relay): each row's lease is renewed just before its delivery, only while this worker
still holds it, and a row another worker has taken meanwhile is left to that worker; what
becomes of a row is written only while the lease is still this worker's. Keep ``lease_s``
above the longest a single delivery can take (the channels' own timeouts).

At-least-once, exactly-once in practice: a row is marked sent right after the surface
accepted it. A crash between the two would send it again on restart, and so would a
connection lost after the surface took a message in but before its answer arrived. Email
carries a ``Message-ID`` derived from the row so clients fold such a repeat into one; the
Bot API has no such key.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from tortoise.expressions import Q

from hub.core.store.claims import claim, renew, update_if_held
from hub.core.store.notification_models import Notification, NotificationKind, NotificationStatus
from hub.core.workers import OnDemand
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)

LEASE = "claimed_until"  # the field a claim stamps; its value is also the claim's token


class Outcome(StrEnum):
    SENT = "sent"
    SKIPPED = "skipped"  # nothing to send any more; not an error


class DeliveryRefused(Exception):
    """A permanent failure: retrying cannot help. Any other exception is transient."""


class RetryLater(Exception):
    """A transient failure whose peer said when to come back (an HTTP 429's
    ``Retry-After``): the row is tried again no sooner than ``after_s`` from now."""

    def __init__(self, message: str, after_s: float) -> None:
        super().__init__(message)
        self.after_s = max(0.0, after_s)


Deliverer = Callable[[Notification], Awaitable[Outcome]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    first_delay_s: float = 2.0
    max_delay_s: float = 600.0
    jitter: float = 0.2  # ± this fraction, so recovering peers are not hit all at once

    def delay(self, attempts: int) -> timedelta:
        base = min(self.max_delay_s, self.first_delay_s * 2 ** max(0, attempts - 1))
        spread = base * self.jitter
        return timedelta(seconds=max(0.0, base + random.uniform(-spread, spread)))

    def delay_asked(self, after_s: float) -> timedelta:
        """The peer's own delay, never shortened; spread only later, so the rows it held
        back do not all come back in the same instant."""
        return timedelta(seconds=after_s * (1 + random.uniform(0, self.jitter)))


class OutboxWorker:
    def __init__(
        self,
        deliver: Deliverer,
        *,
        retry: RetryPolicy | None = None,
        batch_size: int = 50,
        lease_s: float = 120.0,
        idle_poll_s: float = 5.0,
    ) -> None:
        self.deliver = deliver
        self.retry = retry or RetryPolicy()
        self.batch_size = batch_size
        self.lease_s = lease_s
        self.idle_poll_s = idle_poll_s
        self._worker = OnDemand(
            "outbox-worker", self.run_once, self._idle_timeout, retry_s=idle_poll_s
        )
        self._stopping = False

    def wake(self) -> None:
        """Look for due rows now (called after a commit that may have written some)."""
        self._worker.wake()

    @property
    def running(self) -> bool:
        return self._worker.running

    def start(self) -> None:
        self._stopping = False
        self._worker.start()

    async def stop(self) -> None:
        self._stopping = True  # a batch in progress stops before its next row
        await self._worker.stop()

    async def _idle_timeout(self) -> float:
        """Sleep until the next row is due (or the poll interval, whichever is sooner)."""
        upcoming = (
            await Notification.filter(status=NotificationStatus.PENDING)
            .order_by("next_attempt_at")
            .first()
            .values_list("next_attempt_at", flat=True)
        )
        if not isinstance(upcoming, datetime):
            return self.idle_poll_s
        wait = (upcoming - utcnow()).total_seconds()
        return min(self.idle_poll_s, max(0.01, wait))

    async def run_once(self) -> int:
        """Deliver one batch of due rows; returns how many were handled."""
        batch = await self._claim()
        for row in batch:
            if self._stopping:
                break
            if not await renew(row, LEASE, self._lease_end()):
                logger.info("notification %s was taken over by another worker", row.id)
                continue
            await self._deliver_one(row)
        return len(batch)

    def _lease_end(self) -> datetime:
        return utcnow() + timedelta(seconds=self.lease_s)

    async def _claim(self) -> list[Notification]:
        now = utcnow()
        due = Notification.filter(
            Q(claimed_until=None) | Q(claimed_until__lt=now),
            status=NotificationStatus.PENDING,
            next_attempt_at__lte=now,
        )
        return await claim(
            due,
            order=("next_attempt_at", "id"),
            limit=self.batch_size,
            lease={LEASE: now + timedelta(seconds=self.lease_s)},
        )

    async def _deliver_one(self, row: Notification) -> None:
        updates = (NotificationKind.DECIDED, NotificationKind.UPDATED)
        if row.kind in updates and await self._card_still_on_its_way(row):
            return
        try:
            outcome = await self.deliver(row)
        except DeliveryRefused as refused:
            logger.warning("notification %s refused for good: %s", row.id, refused)
            await self._finish(row, NotificationStatus.FAILED, error=str(refused))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            attempts = row.attempts + 1
            if isinstance(error, RetryLater):
                due = utcnow() + self.retry.delay_asked(error.after_s)
            else:
                due = utcnow() + self.retry.delay(attempts)
            logger.info(
                "notification %s via %s failed (attempt %d), retrying at %s: %s",
                row.id,
                row.surface,
                attempts,
                due.isoformat(),
                error,
            )
            await self._release(
                row,
                attempts=attempts,
                next_attempt_at=due,
                last_error=f"{type(error).__name__}: {error}"[:2000],
            )
        else:
            sent = outcome is Outcome.SENT
            await self._finish(row, NotificationStatus.SENT if sent else NotificationStatus.SKIPPED)

    async def _card_still_on_its_way(self, row: Notification) -> bool:
        """An update must not overtake the card it updates: wait for the card's row."""
        card_row = await Notification.filter(
            kind=NotificationKind.WAITING,
            interaction_id=row.interaction_id,
            user_id=row.user_id,
            surface=row.surface,
            status=NotificationStatus.PENDING,
        ).first()
        if card_row is None:
            return False
        later = max(card_row.next_attempt_at, utcnow()) + timedelta(milliseconds=50)
        await self._release(row, next_attempt_at=later)
        return True

    async def _finish(self, row: Notification, status: NotificationStatus, error: str = "") -> None:
        await self._release(
            row,
            status=status,
            attempts=row.attempts + 1,
            sent_at=utcnow() if status is NotificationStatus.SENT else None,
            last_error=error[:2000],
        )

    async def _release(self, row: Notification, **values: Any) -> None:
        """Record what became of ``row`` and give up its lease, if this worker still holds
        it; a worker that took the row over decides its fate instead."""
        if not await update_if_held(row, LEASE, **values, **{LEASE: None}):
            logger.warning(
                "notification %s: the lease ran out during its delivery and another worker "
                "took the row; it may be sent again (raise the outbox lease above the "
                "delivery timeout)",
                row.id,
            )


__all__ = [
    "Deliverer",
    "DeliveryRefused",
    "OutboxWorker",
    "Outcome",
    "RetryLater",
    "RetryPolicy",
]
