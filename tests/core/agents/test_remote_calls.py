"""Leases on remote calls: one hub process drives a call; another takes it once it lapses."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from hub.core.agents.remote_calls import (
    claim_call,
    claimable_calls,
    holds,
    process_owner_name,
    release_calls,
    release_every_call,
    renew_leases,
)
from hub.core.store.remote_models import RemoteCall
from hub.protocol.clock import utcnow


async def a_call(call_id: str = "tsk_1", **fields: object) -> RemoteCall:
    now = utcnow()
    return await RemoteCall.create(
        id=call_id, workspace_id="ws", agent_id="agt", started_at=now, updated_at=now, **fields
    )


async def test_a_call_is_claimed_by_one_process_until_its_lease_lapses(db: str) -> None:
    one, two = process_owner_name(), process_owner_name()
    assert one != two
    await a_call()
    assert await claimable_calls(one) == ["tsk_1"] == await claimable_calls(two)
    assert await claim_call("tsk_1", one, 60)
    assert not await claim_call("tsk_1", two, 60)
    assert await claimable_calls(two) == []
    assert await claim_call("tsk_1", one, 60)  # its own, again
    assert await renew_leases(["tsk_1"], one, 60) == {"tsk_1"}

    lapsed = utcnow() - timedelta(seconds=1)
    await RemoteCall.filter(id="tsk_1").update(lease_expires_at=lapsed)  # one stopped renewing
    assert await claim_call("tsk_1", two, 60)
    assert await renew_leases(["tsk_1"], one, 60) == set()  # one must stop driving it
    assert not await holds("tsk_1", one) and await holds("tsk_1", two)


async def test_claims_at_once_have_one_winner(db: str) -> None:
    await a_call()
    owners = [process_owner_name() for _ in range(8)]
    won = await asyncio.gather(*(claim_call("tsk_1", o, 60) for o in owners))
    assert sum(won) == 1
    assert (await RemoteCall.get(id="tsk_1")).owner == owners[won.index(True)]


async def test_a_release_frees_the_calls_and_finished_ones_stay_put(db: str) -> None:
    one, two = process_owner_name(), process_owner_name()
    await a_call("tsk_1")
    await a_call("tsk_2", finished=True)
    assert await claim_call("tsk_1", one, 60)
    assert not await claim_call("tsk_2", one, 60)  # finished: nothing to drive
    await release_calls(one)
    assert await claimable_calls(two) == ["tsk_1"]
    assert await claim_call("tsk_1", two, 60)


async def test_freeing_every_call_lets_a_restarted_embedded_hub_resume_at_once(db: str) -> None:
    crashed, restarted = process_owner_name(), process_owner_name()
    await a_call("tsk_1")
    assert await claim_call("tsk_1", crashed, 60)
    assert not await claim_call("tsk_1", restarted, 60)  # the lease outlives its process
    await release_every_call()
    assert await claim_call("tsk_1", restarted, 60)
