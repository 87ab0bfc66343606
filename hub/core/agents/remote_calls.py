"""Which hub process drives a remote call: a lease on the ledger row.

Several hub processes may share one PostgreSQL database. Each runs the A2A connector, and
each would otherwise resume every unfinished call it finds, so the remote would see every
``GetTask`` and ``SubscribeToTask`` twice and the person every report race itself. A call
is therefore driven only by the process named in its ``owner``, until ``lease_expires_at``.

* ``claim_call`` takes a call that is free, already this process's, or whose lease ran out,
  in one conditional ``UPDATE``: the database decides between two processes claiming at
  once (on PostgreSQL the second update waits for the first's row lock, then finds the
  condition false), so no read-then-write race is left.
* ``renew_leases`` is called more often than the lease lasts by the process that drives
  the calls; what it no longer owns (it stalled past its lease and another took over) it
  must stop driving at once.
* ``release_calls`` on an orderly stop lets another process take over without waiting.

A process that dies (``kill -9``, a lost machine) renews nothing: its calls are taken over
once their lease runs out. Times come from each process's clock, so hosts' clocks must
agree to well within the lease.
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import timedelta

from tortoise.expressions import Q

from hub.core.store.remote_models import RemoteCall
from hub.protocol.clock import utcnow

MAX_CALLS_PER_PASS = 500


def process_owner_name() -> str:
    """A name for this process, unique among the hub's processes, readable in the ledger."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(4)}"


def _free_for(owner: str) -> Q:
    return Q(owner=None) | Q(owner=owner) | Q(lease_expires_at__lt=utcnow())


async def claimable_calls(owner: str, limit: int = MAX_CALLS_PER_PASS) -> list[str]:
    """Unfinished calls that ``owner`` holds or may claim, oldest first."""
    ids = (
        await RemoteCall.filter(Q(finished=False), _free_for(owner))
        .order_by("started_at")
        .limit(limit)
        .values_list("id", flat=True)
    )
    return [str(i) for i in ids]


async def claim_call(call_id: str, owner: str, lease_s: float) -> bool:
    """Make ``owner`` the driver of the call for ``lease_s``; ``False`` if another holds it."""
    claimed = await RemoteCall.filter(Q(id=call_id), Q(finished=False), _free_for(owner)).update(
        owner=owner, lease_expires_at=utcnow() + timedelta(seconds=lease_s)
    )
    return bool(claimed)


async def renew_leases(call_ids: list[str], owner: str, lease_s: float) -> set[str]:
    """Extend ``owner``'s leases on ``call_ids``; returns those it still holds."""
    if not call_ids:
        return set()
    await RemoteCall.filter(id__in=call_ids, owner=owner).update(
        lease_expires_at=utcnow() + timedelta(seconds=lease_s)
    )
    held = await RemoteCall.filter(id__in=call_ids, owner=owner).values_list("id", flat=True)
    return {str(i) for i in held}


async def holds(call_id: str, owner: str) -> bool:
    return await RemoteCall.filter(id=call_id, owner=owner).exists()


async def release_every_call() -> None:
    """Free every unfinished call, whoever held it: for a database only one process uses
    (embedded SQLite), where a lease left behind belongs to a process that is gone."""
    await (
        RemoteCall.filter(finished=False)
        .exclude(owner=None)
        .update(owner=None, lease_expires_at=None)
    )


async def release_calls(owner: str) -> None:
    """Give up every call ``owner`` drives, so another process takes them over at once."""
    await RemoteCall.filter(owner=owner, finished=False).update(owner=None, lease_expires_at=None)


__all__ = [
    "claim_call",
    "claimable_calls",
    "holds",
    "process_owner_name",
    "release_calls",
    "renew_leases",
]
