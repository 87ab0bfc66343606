"""Agents: pairing codes redeemed once, credentials, confirmation, revocation, rate limits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from hub.core.agents.registry import (
    PAIRING_ATTEMPTS,
    agent_for_credential,
    agent_view,
    confirm_agent,
    get_agent,
    list_agents,
    presence_counts,
    public_status,
    redeem_pairing_code,
    revoke_agent,
)
from hub.core.errors import Conflict, Gone, HubError, InvalidInput, NotFound, RateLimited
from hub.core.log.bus import DEFAULT_BUS
from hub.core.log.events import events_after, rebuild_projections
from hub.core.people.credentials import hash_token
from hub.core.people.ratelimit import FailureLimiter
from hub.core.store.models import Agent, AgentStatus, Event, PairingCode, Workspace
from tests.core.agent_setup import SECRET_KEY, new_code, paired_agent


@pytest.fixture(autouse=True)
def _fresh_attempt_counts() -> Iterator[None]:
    PAIRING_ATTEMPTS.reset()
    yield
    PAIRING_ATTEMPTS.reset()


async def redeem(code: str, source: str | None = None, name: str = "bot") -> tuple[Agent, str]:
    return await redeem_pairing_code(
        code,
        name=name,
        runtime="python",
        version="2.1",
        capabilities=["tasks", "messages", "tasks"],
        secret_key=SECRET_KEY,
        source=source,
    )


async def test_a_code_pairs_a_pending_agent_and_hands_over_a_credential_once(
    workspace: Workspace,
) -> None:
    code = await new_code(workspace)
    agent, credential = await redeem(code, name="  build bot  ")
    assert agent.workspace_id == workspace.id
    assert agent.name == "build bot" and agent.runtime == "python" and agent.version == "2.1"
    assert agent.capabilities == ["tasks", "messages"]
    assert agent_view(agent)["status"] == "pending"
    assert credential.startswith("lu_agt_")
    # Only the hash is kept, and the credential appears in no event.
    assert agent.credential_hash == hash_token(credential)
    events = await events_after(workspace.id, 0)
    assert [e.type for e in events] == ["agent.paired"]
    assert events[0].actor == f"agent:{agent.id}"
    assert credential not in json.dumps([e.payload for e in events])
    row = await PairingCode.get(workspace_id=workspace.id)
    assert row.used_at is not None and row.agent_id == agent.id
    assert (await agent_for_credential(credential)).id == agent.id


async def test_codes_are_accepted_the_way_people_type_them(workspace: Workspace) -> None:
    code = await new_code(workspace)
    typed = code.replace("-", "").lower().replace("0", "o").replace("1", "l")
    agent, _ = await redeem(typed)
    assert agent.workspace_id == workspace.id


async def test_a_code_works_once(workspace: Workspace) -> None:
    code = await new_code(workspace)
    await redeem(code)
    with pytest.raises(Gone) as used:
        await redeem(code)
    assert used.value.code == "pairing_code_used" and used.value.status == 410
    assert "new code" in used.value.hint
    assert len(await list_agents(workspace.id)) == 1


async def test_ten_agents_racing_for_one_code_pair_one(workspace: Workspace) -> None:
    code = await new_code(workspace)
    results = await asyncio.gather(*(redeem(code) for _ in range(10)), return_exceptions=True)
    winners = [r for r in results if isinstance(r, tuple)]
    losers = [r for r in results if isinstance(r, HubError)]
    assert len(winners) == 1 and len(losers) == 9
    assert {e.code for e in losers} == {"pairing_code_used"}
    assert len(await list_agents(workspace.id)) == 1
    assert [e.type for e in await events_after(workspace.id, 0)] == ["agent.paired"]


async def test_an_expired_code_is_refused(workspace: Workspace) -> None:
    code = await new_code(workspace)
    await PairingCode.filter(workspace_id=workspace.id).update(
        expires_at=datetime.now(UTC) - timedelta(seconds=1)
    )
    with pytest.raises(Gone) as expired:
        await redeem(code)
    assert expired.value.code == "pairing_code_expired"
    assert "lineup pair" in expired.value.hint
    assert await list_agents(workspace.id) == []


async def test_an_unknown_code_is_refused_with_a_next_step(workspace: Workspace) -> None:
    with pytest.raises(HubError) as unknown:
        await redeem("ZZZZ-ZZZZ")
    assert unknown.value.code == "pairing_code_unknown" and unknown.value.status == 401
    assert "lineup pair" in unknown.value.hint


async def test_a_code_signed_with_another_secret_is_unknown(workspace: Workspace) -> None:
    code = await new_code(workspace)
    with pytest.raises(HubError) as unknown:
        await redeem_pairing_code(
            code, name="x", runtime="", version="", capabilities=[], secret_key="other" * 8
        )
    assert unknown.value.code == "pairing_code_unknown"


async def test_guessing_is_limited_per_address_even_for_a_right_code(
    workspace: Workspace,
) -> None:
    for _ in range(PAIRING_ATTEMPTS.per_source):
        with pytest.raises(HubError):
            await redeem("AAAA-AAAA", source="203.0.113.9")
    code = await new_code(workspace)
    with pytest.raises(RateLimited) as limited:
        await redeem(code, source="203.0.113.9")
    assert limited.value.code == "pairing_rate_limited" and limited.value.status == 429
    assert limited.value.details["retryAfterS"] >= 1
    # Another address is not held back by the first one's guesses.
    agent, _ = await redeem(code, source="198.51.100.7")
    assert agent.workspace_id == workspace.id


def test_the_overall_cap_holds_across_addresses_and_the_window_slides() -> None:
    now = [1000.0]
    limiter = FailureLimiter(per_source=5, overall=8, window_s=60, clock=lambda: now[0])
    for n in range(8):
        limiter.check(f"10.0.0.{n}")
        limiter.record_failure(f"10.0.0.{n}")
    with pytest.raises(RateLimited):
        limiter.check("10.0.0.99")
    with pytest.raises(RateLimited):
        limiter.check(None)
    now[0] += 61
    limiter.check("10.0.0.99")  # the old failures have left the window


def test_sources_tracked_are_bounded() -> None:
    limiter = FailureLimiter(per_source=1, overall=10_000, window_s=60, max_sources=3)
    for n in range(10):
        limiter.record_failure(f"10.0.0.{n}")
    with pytest.raises(RateLimited):
        limiter.check("10.0.0.9")
    limiter.check("10.0.0.0")  # forgotten first: memory stays bounded under a spray


async def test_pairing_refuses_bad_names_and_labels(workspace: Workspace) -> None:
    code = await new_code(workspace)
    with pytest.raises(InvalidInput) as bad_name:
        await redeem(code, name="   ")
    assert bad_name.value.code == "invalid_agent_name"
    with pytest.raises(InvalidInput):
        await redeem_pairing_code(
            code, name="ok", runtime="r" * 101, version="", capabilities=[], secret_key=SECRET_KEY
        )
    # Refusing the input did not use the code up.
    agent, _ = await redeem(code)
    assert agent.name == "bot"


async def test_unknown_and_revoked_credentials_are_refused(workspace: Workspace) -> None:
    agent, credential = await paired_agent(workspace)
    with pytest.raises(HubError) as unknown:
        await agent_for_credential("lu_agt_not-a-credential")
    assert unknown.value.code == "invalid_credential" and unknown.value.close_code == 4401
    await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    with pytest.raises(HubError) as revoked:
        await agent_for_credential(credential)
    assert revoked.value.code == "credential_revoked" and revoked.value.status == 401


async def test_agents_are_listed_and_found_only_in_their_workspace(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    first, _ = await paired_agent(mine, "first")
    second, _ = await paired_agent(mine, "second")
    other, _ = await paired_agent(theirs, "other")
    assert [a.id for a in await list_agents(mine.id)] == [first.id, second.id]
    assert (await get_agent(mine.id, first.id)).name == "first"
    with pytest.raises(NotFound) as missing:
        await get_agent(mine.id, other.id)
    assert missing.value.code == "agent_not_found"
    with pytest.raises(NotFound):
        await confirm_agent(mine.id, other.id, "mine now", by="user:usr_x")
    with pytest.raises(NotFound):
        await revoke_agent(mine.id, other.id, by="user:usr_x")
    assert (await Agent.get(id=other.id)).status == AgentStatus.PENDING


async def test_the_frame_counts_agents_as_their_public_status_says(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    assert await presence_counts(mine.id) == (0, 0)
    online, _ = await paired_agent(mine, "online")
    await confirm_agent(mine.id, online.id, "online", by="user:usr_x")
    offline, _ = await paired_agent(mine, "offline")
    await confirm_agent(mine.id, offline.id, "offline", by="user:usr_x")
    connected_unconfirmed, _ = await paired_agent(mine, "pending")
    gone, _ = await paired_agent(mine, "gone")
    await revoke_agent(mine.id, gone.id, by="user:usr_x")
    await paired_agent(theirs, "theirs")
    await Agent.filter(id__in=[online.id, connected_unconfirmed.id]).update(
        status=AgentStatus.ONLINE
    )
    statuses = [public_status(a) for a in await list_agents(mine.id)]
    assert sorted(statuses) == ["offline", "online", "pending", "revoked"]
    assert await presence_counts(mine.id) == (1, 3)  # online; all but the revoked one


async def test_confirming_binds_the_name_once(workspace: Workspace) -> None:
    agent, _ = await paired_agent(workspace, "proposed")
    confirmed = await confirm_agent(workspace.id, agent.id, "Build bot", by="usr_owner")
    view = agent_view(confirmed)
    assert view["name"] == "Build bot" and view["status"] == "offline"
    assert view["confirmedAt"] is not None
    again = await confirm_agent(workspace.id, agent.id, "Build bot", by="user:usr_owner")
    assert again.confirmed_at == confirmed.confirmed_at
    renamed = await confirm_agent(workspace.id, agent.id, "Deploy bot", by="user:usr_owner")
    assert renamed.name == "Deploy bot" and renamed.confirmed_at == confirmed.confirmed_at
    events = [e for e in await events_after(workspace.id, 0) if e.type == "agent.confirmed"]
    assert [e.payload["name"] for e in events] == ["Build bot", "Deploy bot"]
    assert {e.actor for e in events} == {"user:usr_owner"}


async def test_a_revoked_agent_cannot_be_confirmed(workspace: Workspace) -> None:
    agent, _ = await paired_agent(workspace)
    await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    with pytest.raises(Conflict) as refused:
        await confirm_agent(workspace.id, agent.id, "too late", by="user:usr_owner")
    assert refused.value.code == "agent_revoked"


async def test_revoking_is_an_event_on_the_bus_and_happens_once(workspace: Workspace) -> None:
    agent, _ = await paired_agent(workspace)
    with DEFAULT_BUS.subscribe(workspace.id, accepts=lambda e: e.type == "agent.revoked") as sub:
        revoked = await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
        published = await asyncio.wait_for(sub.get(), 5)
    assert published.envelope["payload"]["agentId"] == agent.id
    assert agent_view(revoked)["status"] == "revoked" and revoked.revoked_at is not None
    again = await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    assert again.revoked_at == revoked.revoked_at
    types = [e.type for e in await events_after(workspace.id, 0)]
    assert types.count("agent.revoked") == 1


async def test_the_view_has_the_fields_of_the_contract(workspace: Workspace) -> None:
    agent, _ = await paired_agent(workspace)
    view = agent_view(agent)
    for key in (
        "id",
        "name",
        "runtime",
        "version",
        "status",
        "lastHeartbeatAt",
        "capabilities",
        "createdAt",
        "confirmedAt",
        "connectionLost",
    ):
        assert key in view
    assert view["connected"] is False and view["connectionLost"] is None
    json.dumps(view)


async def test_agent_events_leave_rebuilding_the_projections_intact(workspace: Workspace) -> None:
    agent, _ = await paired_agent(workspace)
    await confirm_agent(workspace.id, agent.id, "named", by="user:usr_owner")
    await revoke_agent(workspace.id, agent.id, by="user:usr_owner")
    before = await Agent.get(id=agent.id)
    assert await rebuild_projections([workspace.id]) == 3
    after = await Agent.get(id=agent.id)
    assert (after.status, after.name, after.revoked_at) == (
        before.status,
        before.name,
        before.revoked_at,
    )
    assert await Event.filter(workspace_id=workspace.id).count() == 3


async def test_an_agents_events_queued_behind_its_revocation_are_refused(
    workspace: Workspace,
) -> None:
    """Queued together, they share a group commit: the events before the revocation are
    stored, the ones after it are refused, though the batch checked the agent already."""
    from hub.core.log.events import LOG_WRITES, queue_append

    agent, _ = await paired_agent(workspace)
    by_agent = f"agent:{agent.id}"
    batches_before = LOG_WRITES.batches_written
    queued = [
        queue_append(workspace.id, "agent.note", {"n": 1}, actor=by_agent),
        queue_append(workspace.id, "agent.note", {"n": 2}, actor=by_agent),
    ]
    await asyncio.sleep(0)  # their batch is being written
    # A person's write goes first in the next batch (group_commit), so the agent's note
    # queued after it meets the revocation in the batch they share.
    queued += [
        queue_append(workspace.id, "agent.note", {"n": 3}, actor=by_agent),
        queue_append(workspace.id, "agent.revoked", {"agentId": agent.id}, actor="user:usr_owner"),
    ]
    outcomes = await asyncio.gather(*queued, return_exceptions=True)
    assert LOG_WRITES.batches_written - batches_before <= 2
    assert [type(o).__name__ for o in outcomes[:2]] == ["AppendResult"] * 2
    assert type(outcomes[3]).__name__ == "AppendResult"
    refused = outcomes[2]
    assert isinstance(refused, HubError) and refused.code == "credential_revoked"
    notes = [e.payload["n"] for e in await events_after(workspace.id, 0) if e.type == "agent.note"]
    assert notes == [1, 2]
