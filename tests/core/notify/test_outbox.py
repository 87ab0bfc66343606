"""The outbox worker: retries with growing delays, never loses a row, never takes one twice."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from hub.core.ids import new_id
from hub.core.notify.outbox import DeliveryRefused, OutboxWorker, Outcome, RetryPolicy
from hub.core.store.notification_models import Notification, NotificationKind, NotificationStatus


async def _rows(user_id: str, workspace_id: str, count: int) -> list[str]:
    now = datetime.now(UTC)
    ids = []
    for n in range(count):
        row = await Notification.create(
            id=new_id("notification"),
            workspace_id=workspace_id,
            user_id=user_id,
            surface="email",
            kind=NotificationKind.FAILED,
            task_id=f"task_{n}",
            event_sequence=n,
            dedupe_key=f"failed:task_{n}:{user_id}:email",
            next_attempt_at=now,
            created_at=now,
        )
        ids.append(row.id)
    return ids


async def test_transient_failures_are_retried_with_growing_delays(make_user) -> None:
    user, workspace = await make_user("ada")
    [row_id] = await _rows(user.id, workspace.id, 1)
    seen: list[datetime] = []

    async def flaky(row: Notification) -> Outcome:
        seen.append(datetime.now(UTC))
        if len(seen) < 4:
            raise ConnectionError("peer away")
        return Outcome.SENT

    policy = RetryPolicy(first_delay_s=0.05, max_delay_s=10, jitter=0)
    assert [policy.delay(n).total_seconds() for n in (1, 2, 3)] == [0.05, 0.1, 0.2]
    worker = OutboxWorker(flaky, retry=policy, idle_poll_s=0.05)
    worker.start()
    try:
        for _ in range(500):
            row = await Notification.get(id=row_id)
            if row.status == NotificationStatus.SENT:
                break
            await asyncio.sleep(0.02)
    finally:
        await worker.stop()
    assert row.status == NotificationStatus.SENT
    assert row.attempts == 4 and row.sent_at is not None
    # Lower bounds only: a retry can come late on a busy machine, never early.
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(seen)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2


async def test_a_permanent_refusal_ends_the_row(make_user) -> None:
    user, workspace = await make_user("ada")
    [row_id] = await _rows(user.id, workspace.id, 1)

    async def refuse(row: Notification) -> Outcome:
        raise DeliveryRefused("not linked any more")

    assert await OutboxWorker(refuse).run_once() == 1
    row = await Notification.get(id=row_id)
    assert row.status == NotificationStatus.FAILED and "not linked" in row.last_error


async def test_two_workers_never_deliver_the_same_row(make_user) -> None:
    user, workspace = await make_user("ada")
    ids = await _rows(user.id, workspace.id, 60)
    delivered: Counter[str] = Counter()

    async def deliver(row: Notification) -> Outcome:
        delivered[row.id] += 1
        await asyncio.sleep(0)
        return Outcome.SENT

    workers = [OutboxWorker(deliver, batch_size=7) for _ in range(2)]
    while len(delivered) < len(ids):
        await asyncio.gather(*(w.run_once() for w in workers))
    assert set(delivered) == set(ids) and set(delivered.values()) == {1}


async def test_a_crashed_workers_claim_expires(make_user) -> None:
    user, workspace = await make_user("ada")
    [row_id] = await _rows(user.id, workspace.id, 1)
    await Notification.filter(id=row_id).update(
        claimed_until=datetime.now(UTC) - timedelta(seconds=1)
    )
    sent: list[str] = []

    async def deliver(row: Notification) -> Outcome:
        sent.append(row.id)
        return Outcome.SENT

    assert await OutboxWorker(deliver).run_once() == 1
    assert sent == [row_id]


async def test_a_batch_that_outlasts_its_lease_leaves_the_rows_another_worker_took(
    make_user, caplog: pytest.LogCaptureFixture
) -> None:
    """A slow relay: worker A's lease ends while its first delivery hangs, worker B claims
    the batch's rows; A must not deliver a row B holds, nor write over what B recorded."""
    user, workspace = await make_user("ada")
    first, *rest = await _rows(user.id, workspace.id, 3)
    delivered: Counter[str] = Counter()
    a_is_delivering = asyncio.Event()
    b_has_delivered = asyncio.Event()

    async def slow(row: Notification) -> Outcome:
        delivered[row.id] += 1
        a_is_delivering.set()
        await b_has_delivered.wait()
        return Outcome.SENT

    async def fast(row: Notification) -> Outcome:
        delivered[row.id] += 1
        return Outcome.SENT

    a = OutboxWorker(slow, batch_size=3, lease_s=0.2)
    b = OutboxWorker(fast, batch_size=3, lease_s=60)
    a_pass = asyncio.create_task(a.run_once())
    await asyncio.wait_for(a_is_delivering.wait(), 5)
    await asyncio.sleep(0.3)  # A's leases have all run out
    assert await b.run_once() == 3
    b_has_delivered.set()
    assert await asyncio.wait_for(a_pass, 5) == 3
    # A started the first row while it held it; the other two were B's when A reached them.
    assert [delivered[row_id] for row_id in rest] == [1, 1]
    rows = await Notification.filter(id__in=[first, *rest])
    assert {row.status for row in rows} == {NotificationStatus.SENT}
    assert all(row.attempts == 1 and row.claimed_until is None for row in rows)
    # B's record of the first row stands: A's late finish was refused, and said so.
    assert any("lease ran out" in record.getMessage() for record in caplog.records)
