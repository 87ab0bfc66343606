"""Approval policies in the core: quorum votes, named approvers, rules, and the clock."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from hub.core.approvals.policy_clock import PolicyClock
from hub.core.approvals.rules import create_rule, list_rules
from hub.core.errors import Conflict, Forbidden, InvalidInput
from hub.core.ids import new_id
from hub.core.log.events import events_after, last_sequence, rebuild_projections
from hub.core.notify.preferences import (
    Surface,
    declare_surface,
    update_preferences,
    withdraw_surface,
)
from hub.core.people.audit import audit_trail
from hub.core.store.models import Membership, Role, User, Workspace
from hub.core.store.notification_models import ChannelAccount, Notification, NotificationKind
from hub.core.work.interactions import get_interaction, respond_to_interaction
from hub.core.work.tasks import create_task
from hub.protocol.clock import utcnow
from tests.core.agent_reports import agent_asks, agent_reports, make_agent


async def member(make_user, workspace: Workspace, name: str) -> User:  # type: ignore[no-untyped-def]
    user, _ = await make_user(name)
    await Membership.create(
        id=new_id("membership"), workspace=workspace, user=user, role=Role.MEMBER
    )
    return user


@pytest.fixture
async def team(make_user):  # type: ignore[no-untyped-def]
    """An owner and three members of one workspace."""
    owner, workspace = await make_user("owner")
    people = [await member(make_user, workspace, name) for name in ("ada", "bo", "cy")]
    return workspace, owner, people


async def asked(workspace: Workspace, **card: object) -> tuple[str, str]:
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "deploy", by="user:usr_x", target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    return await agent_asks(agent, task.id, **card), agent.id


def actor(user: User) -> str:
    return f"user:{user.id}"


async def test_two_of_three_named_approvers_resolve_with_the_votes(team) -> None:  # type: ignore[no-untyped-def]
    workspace, owner, (ada, bo, cy) = team
    policy = {"mode": "quorum", "required": 2, "approvers": [ada.email, bo.id, cy.email]}
    interaction_id, agent_id = await asked(workspace, policy=policy)
    stored = await get_interaction(workspace.id, interaction_id)
    assert stored.policy is not None and stored.policy["approvers"] == [ada.id, bo.id, cy.id]
    after = await last_sequence(workspace.id)

    with pytest.raises(Forbidden) as refused:
        await respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(owner), via="web"
        )
    assert refused.value.code == "not_an_approver"

    first = await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(ada), via="web"
    )
    assert first.status == "pending" and len(first.votes or []) == 1
    with pytest.raises(Conflict) as again:
        await respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(ada), via="web"
        )
    assert again.value.code == "already_voted"

    done = await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(bo), via="telegram"
    )
    assert done.status == "resolved"
    assert (done.responded_by, done.responded_via) == (actor(bo), "telegram")
    assert done.response is not None and done.response["optionId"] == "approve"
    assert [v["actor"] for v in done.response["votes"]] == [actor(ada), actor(bo)]

    [decision] = await events_after(workspace.id, after, recipient_agent_id=agent_id)
    assert decision.type == "interaction.resolved" and decision.actor == "hub:policy"
    trail = [e["type"] for e in await audit_trail(workspace.id, after, 50)]
    assert trail == ["interaction.voted", "interaction.voted", "interaction.resolved"]


async def test_the_first_rejection_decides_a_quorum(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _, (ada, bo, cy) = team
    policy = {"mode": "quorum", "required": 2, "approvers": [ada.id, bo.id, cy.id]}
    interaction_id, _ = await asked(workspace, policy=policy)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(ada), via="web"
    )
    done = await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "reject"}, responder=actor(bo), via="web"
    )
    assert done.status == "resolved" and done.response is not None
    assert done.response["optionId"] == "reject"


async def test_any_of_resolves_on_the_first_approval(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _owner, (ada, bo, _) = team
    interaction_id, _ = await asked(workspace, policy={"approvers": [ada.id, bo.id]})
    done = await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(bo), via="web"
    )
    assert done.status == "resolved" and done.responded_by == actor(bo)


async def test_a_stranger_named_as_approver_is_refused_up_front(team, make_user) -> None:  # type: ignore[no-untyped-def]
    workspace, _, _ = team
    stranger, _ = await make_user("stranger")
    agent = await make_agent(workspace)
    with pytest.raises(InvalidInput) as refused:
        await agent_asks(agent, None, policy={"approvers": [stranger.email]})
    assert refused.value.code == "unknown_approver"


async def test_a_rule_gives_high_risk_cards_a_policy(team) -> None:  # type: ignore[no-untyped-def]
    workspace, owner, (ada, bo, _) = team
    await create_rule(
        workspace.id,
        policy={"mode": "quorum", "required": 2, "approvers": [ada.email, bo.email]},
        risk="high",
        agent_id=None,
        card_type=None,
        created_by=actor(owner),
        now=utcnow(),
    )
    low, _ = await asked(workspace, risk="low")
    high, _ = await asked(workspace, risk="high")
    assert (await get_interaction(workspace.id, low)).policy is None
    policy = (await get_interaction(workspace.id, high)).policy
    assert policy is not None and policy["required"] == 2 and policy["approvers"] == [ada.id, bo.id]


async def test_the_clock_reminds_escalates_then_denies_a_high_risk_card(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _owner, (ada, bo, _) = team
    declare_surface(Surface("email"))
    try:
        start = utcnow()
        policy = {
            "approvers": [ada.id],
            "remindAfterS": 60,
            "escalateAfterS": 120,
            "escalateTo": [bo.id],
        }
        expires = start + timedelta(seconds=180)
        interaction_id, agent_id = await asked(
            workspace, risk="high", policy=policy, expiresAt=expires.isoformat()
        )
        after = await last_sequence(workspace.id)
        moment = [start]
        clock = PolicyClock(now=lambda: moment[0])

        async def at(seconds: float) -> list[str]:
            moment[0] = start + timedelta(seconds=seconds)
            before = await last_sequence(workspace.id)
            await clock.run_once()
            return [e["type"] for e in await audit_trail(workspace.id, before, 50)]

        assert await at(30) == []
        assert await at(65) == ["interaction.reminded"]
        assert await at(70) == []
        assert await at(125) == ["interaction.escalated"]
        escalated = await get_interaction(workspace.id, interaction_id)
        assert escalated.policy is not None and escalated.policy["approvers"] == [ada.id, bo.id]
        assert await at(200) == ["interaction.resolved"]
        assert await at(300) == []

        denied = await get_interaction(workspace.id, interaction_id)
        assert denied.status == "resolved" and denied.response == {"optionId": "reject"}
        assert (denied.responded_by, denied.responded_via) == ("hub:policy", "policy")
        [decision] = await events_after(workspace.id, after, recipient_agent_id=agent_id)
        assert decision.payload["reason"] == "expired"
        kinds = {
            (n.user_id, n.kind)
            for n in await Notification.filter(interaction_id=interaction_id, surface="email")
        }
        assert (ada.id, NotificationKind.REMINDER) in kinds
        assert (bo.id, NotificationKind.WAITING) in kinds
    finally:
        withdraw_surface("email")


async def test_a_deciding_vote_outranks_an_expiry_planned_before_it(  # type: ignore[no-untyped-def]
    team, monkeypatch
) -> None:
    """The clock read the card, then a deciding reject committed, then the clock's expiry
    step (approve, by this policy) came: the votes' decision must stand."""
    from hub.core.approvals import policy_clock
    from hub.core.work import interactions

    workspace, _, (ada, bo, cy) = team
    expires = utcnow() + timedelta(seconds=30)
    policy = {
        "mode": "quorum",
        "required": 2,
        "approvers": [ada.id, bo.id, cy.id],
        "onExpiry": "approve",
    }
    interaction_id, _ = await asked(workspace, policy=policy, expiresAt=expires.isoformat())
    read_by_the_clock = await get_interaction(workspace.id, interaction_id)

    async def not_yet(workspace_id: str, interaction_id: str) -> bool:
        return False

    # The window: the vote is in, its resolution (and the clock's own check) not yet.
    monkeypatch.setattr(interactions, "resolve_if_decided", not_yet)
    monkeypatch.setattr(policy_clock, "resolve_if_decided", not_yet)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "reject"}, responder=actor(ada), via="web"
    )
    with pytest.raises(Conflict) as refused:
        await policy_clock.take_due_step(read_by_the_clock, expires + timedelta(seconds=1))
    assert refused.value.code == "decided_by_votes"
    monkeypatch.undo()

    await PolicyClock(now=lambda: expires + timedelta(seconds=2)).run_once()
    decided = await get_interaction(workspace.id, interaction_id)
    assert decided.status == "resolved" and decided.response is not None
    assert decided.response["optionId"] == "reject"
    assert [vote["optionId"] for vote in decided.response["votes"]] == ["reject"]


async def test_a_low_risk_card_without_a_policy_just_expires(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _, _ = team
    expires: datetime = utcnow() + timedelta(seconds=30)
    interaction_id, _ = await asked(workspace, risk="low", expiresAt=expires.isoformat())
    clock = PolicyClock(now=lambda: expires + timedelta(seconds=1))
    await clock.run_once()
    assert (await get_interaction(workspace.id, interaction_id)).status == "expired"


async def test_votes_and_policy_steps_survive_a_rebuild(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _owner, (ada, bo, cy) = team
    policy = {"mode": "quorum", "required": 2, "approvers": [ada.id, bo.id, cy.id]}
    interaction_id, _ = await asked(workspace, policy=policy)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=actor(ada), via="web"
    )
    before = await get_interaction(workspace.id, interaction_id)
    await rebuild_projections([workspace.id])
    after = await get_interaction(workspace.id, interaction_id)
    assert (after.policy, after.votes, after.status) == (before.policy, before.votes, "pending")


async def test_a_rule_that_does_not_fit_is_refused_and_nothing_is_saved(team) -> None:  # type: ignore[no-untyped-def]
    workspace, owner, (ada, _, _) = team

    async def add(policy: dict[str, object], **match: str | None) -> str:
        with pytest.raises(InvalidInput) as refused:
            await create_rule(
                workspace.id,
                policy=policy,
                risk=match.get("risk"),
                agent_id=None,
                card_type=match.get("card_type"),
                created_by=actor(owner),
                now=utcnow(),
            )
        assert refused.value.hint
        return refused.value.code

    assert await add({"mode": "quorum", "required": 3, "approvers": [ada.id]}) == "invalid_policy"
    assert await add({"escalateAfterS": 60}) == "invalid_policy"
    assert await add({"mode": "quorum", "required": 1}, card_type="input") == "invalid_rule"
    assert await add({}, risk="extreme") == "invalid_rule"
    assert await list_rules(workspace.id) == []


async def test_a_reminder_goes_to_a_surface_the_card_did_not_reach(team) -> None:  # type: ignore[no-untyped-def]
    workspace, _owner, (ada, _, _) = team
    declare_surface(Surface("email"))
    declare_surface(Surface("telegram", needs_account=True))
    try:
        await ChannelAccount.create(
            id=new_id("channel_account"),
            user=ada,
            surface="telegram",
            external_id="77",
            address="77",
            linked_at=utcnow(),
        )
        # Ada hears of new cards by email only; Telegram is her second surface.
        await update_preferences(ada.id, {"surfaces": {"telegram": {"waiting": False}}})
        start = utcnow()
        interaction_id, _ = await asked(
            workspace, policy={"approvers": [ada.id], "remindAfterS": 60}
        )
        await PolicyClock(now=lambda: start + timedelta(seconds=61)).run_once()
        sent = {
            (n.kind, n.surface)
            for n in await Notification.filter(interaction_id=interaction_id, user_id=ada.id)
        }
        assert sent == {
            (NotificationKind.WAITING, "email"),
            (NotificationKind.REMINDER, "telegram"),
        }
    finally:
        withdraw_surface("email")
        withdraw_surface("telegram")


async def test_a_rule_wins_over_the_agents_policy_and_its_word_on_the_source(team) -> None:  # type: ignore[no-untyped-def]
    workspace, owner, (ada, bo, _) = team
    await create_rule(
        workspace.id,
        policy={"mode": "quorum", "required": 2, "approvers": [ada.id, bo.id]},
        risk="high",
        agent_id=None,
        card_type=None,
        created_by=actor(owner),
        now=utcnow(),
    )
    agent = await make_agent(workspace)
    lax = {"approvers": [], "mode": "any"}
    interaction_id = new_id("interaction")
    card = {
        "id": interaction_id,
        "type": "approval",
        "title": "Wipe?",
        "risk": "high",
        "policy": lax,
    }
    # An agent claiming the policy was chosen already does not skip the rules.
    await agent_reports(
        agent, "interaction.requested", {"interaction": card, "policySource": "none"}
    )
    policy = (await get_interaction(workspace.id, interaction_id)).policy
    assert policy is not None and policy["mode"] == "quorum"


async def test_an_agent_cannot_take_the_clocks_own_envelope_id(team) -> None:  # type: ignore[no-untyped-def]
    """Envelope ids are each actor's own: an agent that sends "policy:<card>:expire" first
    does not make the hub's expiry step of its high-risk card look like a resend."""
    workspace, *_ = team
    expires = utcnow() + timedelta(seconds=30)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "deploy", by="user:usr_x", target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    interaction_id = await agent_asks(agent, task.id, risk="high", expiresAt=expires.isoformat())
    await agent_reports(
        agent,
        "task.status_changed",
        {"taskId": task.id, "status": "waiting_for_human", "summary": "waiting"},
        envelope_id=f"policy:{interaction_id}:expire",
    )
    after = await last_sequence(workspace.id)

    await PolicyClock(now=lambda: expires + timedelta(seconds=1)).run_once()

    denied = await get_interaction(workspace.id, interaction_id)
    assert denied.status == "resolved" and denied.response == {"optionId": "reject"}
    [decision] = await events_after(workspace.id, after, recipient_agent_id=agent.id)
    assert decision.type == "interaction.resolved" and decision.payload["reason"] == "expired"


async def test_the_same_envelope_id_from_two_actors_is_two_events(workspace) -> None:  # type: ignore[no-untyped-def]
    from hub.core.log.events import append_event

    first = await append_event(
        workspace.id, "note.added", {"n": 1}, actor="agent:agt_a", envelope_id="e1"
    )
    other = await append_event(
        workspace.id, "note.added", {"n": 2}, actor="agent:agt_b", envelope_id="e1"
    )
    again = await append_event(
        workspace.id, "note.added", {"n": 3}, actor="agent:agt_a", envelope_id="e1"
    )
    assert not first.duplicate and not other.duplicate
    assert other.sequence == first.sequence + 1
    assert again.duplicate and again.sequence == first.sequence
