"""An agent takes back a card it asked: the card closes, saying why, and takes no answer."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hub.core.approvals.policy_clock import PolicyClock
from hub.core.errors import AlreadyDecided, Forbidden, Gone, HubError, InvalidInput
from hub.core.log.events import append_event, events_after, last_sequence, rebuild_projections
from hub.core.notify.preferences import Surface, declare_surface, withdraw_surface
from hub.core.people.audit import audit_trail
from hub.core.store.models import Agent, Interaction, InteractionStatus, Task, Workspace
from hub.core.store.notification_models import Notification, NotificationKind
from hub.core.task_states import TaskStatus
from hub.core.work.batch_answers import BatchItem, respond_to_batch
from hub.core.work.inbox import inbox
from hub.core.work.interactions import interaction_detail, respond_to_interaction
from hub.core.work.tasks import create_task
from hub.protocol.clock import utcnow
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent

ME = "user:usr_me"


async def asked(workspace: Workspace, **card: object) -> tuple[str, Agent, str]:
    """A running task whose agent asks ME a card; returns (card id, agent, task id)."""
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "deploy", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    return await agent_asks(agent, task.id, **card), agent, task.id


async def withdraw(
    agent: Agent | str, workspace_id: str, interaction_id: str, **payload: object
) -> int:
    actor = agent if isinstance(agent, str) else f"agent:{agent.id}"
    result = await append_event(
        workspace_id,
        "interaction.withdrawn",
        {"interactionId": interaction_id, **payload},
        actor=actor,
    )
    return result.sequence


async def refused_unchanged(workspace_id: str, interaction_id: str, attempt: object) -> HubError:
    """Run ``attempt`` (a coroutine), which must be refused and change nothing."""
    before = await last_sequence(workspace_id)
    card_before = await Interaction.get(id=interaction_id)
    with pytest.raises(HubError) as refused:
        await attempt  # type: ignore[misc]
    assert await last_sequence(workspace_id) == before
    card_after = await Interaction.get(id=interaction_id)
    assert (card_after.status, card_after.withdrawal) == (
        card_before.status,
        card_before.withdrawal,
    )
    return refused.value


async def test_a_withdrawn_card_closes_saying_why_and_its_task_runs_again(
    workspace: Workspace,
) -> None:
    interaction_id, agent, task_id = await asked(workspace)
    assert (await Task.get(id=task_id)).status == TaskStatus.WAITING_FOR_HUMAN
    after = await last_sequence(workspace.id)
    await withdraw(
        agent, workspace.id, interaction_id, reason="answered_in_terminal", note="Allowed once"
    )

    card = await Interaction.get(id=interaction_id)
    assert card.status == InteractionStatus.CANCELLED
    assert card.withdrawal == {"reason": "answered_in_terminal", "note": "Allowed once"}
    assert card.withdrawn_at is not None and card.policy_due_at is None
    assert card.responded_by is None and card.response is None  # nobody answered in the hub
    assert (await Task.get(id=task_id)).status == TaskStatus.RUNNING
    [event] = await events_after(workspace.id, after)
    assert (event.type, event.actor) == ("interaction.withdrawn", f"agent:{agent.id}")
    assert event.task_id == task_id
    # The agent sent it: nothing is sent back to it.
    assert event.recipient_agent_id is None

    view = await interaction_detail(workspace.id, interaction_id)
    assert view["status"] == "cancelled"
    assert view["withdrawal"] == {
        "reason": "answered_in_terminal",
        "note": "Allowed once",
        "withdrawnAt": view["withdrawal"]["withdrawnAt"],
    }
    assert view["withdrawal"]["withdrawnAt"].endswith("Z")
    assert (await inbox(workspace.id))["waitingForMe"] == []
    [entry] = [e for e in await audit_trail(workspace.id, after, 10)]
    assert (entry["type"], entry["reason"]) == ("interaction.withdrawn", "answered_in_terminal")

    # The log alone gives the same card again.
    await rebuild_projections([workspace.id])
    replayed = await Interaction.get(id=interaction_id)
    assert replayed.status == InteractionStatus.CANCELLED
    assert replayed.withdrawal == card.withdrawal and replayed.withdrawn_at == card.withdrawn_at


async def test_the_reason_defaults_to_no_longer_needed(workspace: Workspace) -> None:
    interaction_id, agent, _ = await asked(workspace)
    await withdraw(agent, workspace.id, interaction_id)
    view = await interaction_detail(workspace.id, interaction_id)
    assert (view["withdrawal"]["reason"], view["withdrawal"]["note"]) == ("no_longer_needed", "")


async def test_a_person_answering_a_withdrawn_card_is_refused(workspace: Workspace) -> None:
    interaction_id, agent, _ = await asked(workspace)
    await withdraw(agent, workspace.id, interaction_id, reason="answered_in_terminal")
    refused = await refused_unchanged(
        workspace.id,
        interaction_id,
        respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
        ),
    )
    assert isinstance(refused, Gone) and refused.code == "interaction_cancelled"


async def test_a_batch_that_reaches_a_withdrawn_card_finds_it_closed(workspace: Workspace) -> None:
    interaction_id, agent, task_id = await asked(workspace)
    other_id = await agent_asks(agent, task_id)
    await withdraw(agent, workspace.id, interaction_id, reason="answered_in_terminal")
    answered = await respond_to_batch(
        workspace.id,
        task_id,
        [
            BatchItem(interaction_id, {"optionId": "approve"}),
            BatchItem(other_id, {"optionId": "approve"}),
        ],
        responder=ME,
        via="web",
    )
    outcomes = {item["interactionId"]: item["outcome"] for item in answered["items"]}
    assert outcomes == {interaction_id: "closed", other_id: "decided"}
    assert (await Interaction.get(id=interaction_id)).response is None


async def test_only_the_agent_that_asked_may_withdraw(workspace: Workspace) -> None:
    interaction_id, _, _ = await asked(workspace)
    other = await make_agent(workspace, "other")
    for actor in (f"agent:{other.id}", ME):
        refused = await refused_unchanged(
            workspace.id, interaction_id, withdraw(actor, workspace.id, interaction_id)
        )
        assert isinstance(refused, Forbidden) and refused.code == "interaction_not_yours"
        assert refused.hint


async def test_another_agent_learns_nothing_of_an_answer_that_is_not_its_own(
    workspace: Workspace,
) -> None:
    interaction_id, _, _ = await asked(workspace)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
    )
    other = await make_agent(workspace, "other")
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(other, workspace.id, interaction_id)
    )
    assert refused.code == "interaction_not_yours" and "response" not in refused.details


async def test_a_card_no_agent_asked_cannot_be_withdrawn(workspace: Workspace) -> None:
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    interaction_id = "int_asked_by_a_person"
    await append_event(
        workspace.id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Ship?"}},
        actor=ME,
    )
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(agent, workspace.id, interaction_id)
    )
    assert refused.code == "interaction_not_yours"


async def test_a_card_decided_first_is_not_withdrawn_and_the_agent_learns_the_answer(
    workspace: Workspace,
) -> None:
    interaction_id, agent, _ = await asked(workspace)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "reject"}, responder=ME, via="telegram"
    )
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(agent, workspace.id, interaction_id)
    )
    assert isinstance(refused, AlreadyDecided) and refused.code == "already_decided"
    assert refused.details["response"] == {"optionId": "reject"}
    assert (refused.details["respondedBy"], refused.details["via"]) == (ME, "telegram")
    assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.RESOLVED


async def test_a_closed_card_is_not_withdrawn_again(workspace: Workspace) -> None:
    interaction_id, agent, _ = await asked(workspace)
    await withdraw(agent, workspace.id, interaction_id, reason="answered_in_terminal")
    # Another withdrawal (a new envelope, not a resend) finds it closed.
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(agent, workspace.id, interaction_id)
    )
    assert isinstance(refused, Gone) and refused.code == "interaction_cancelled"
    assert (await Interaction.get(id=interaction_id)).withdrawal == {
        "reason": "answered_in_terminal",
        "note": "",
    }


async def test_a_card_past_its_expiry_is_refused_as_expired(workspace: Workspace) -> None:
    expires = utcnow() - timedelta(seconds=1)
    interaction_id, agent, _ = await asked(workspace, expiresAt=expires.isoformat())
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(agent, workspace.id, interaction_id)
    )
    assert isinstance(refused, Gone) and refused.code == "interaction_expired"


@pytest.mark.parametrize(
    "payload",
    [{"reason": "bored"}, {"note": "x" * 501}, {"note": 7}, {"interactionId": "not an id!"}],
)
async def test_a_withdrawal_that_does_not_fit_is_refused(
    workspace: Workspace, payload: dict[str, object]
) -> None:
    interaction_id, agent, _ = await asked(workspace)
    refused = await refused_unchanged(
        workspace.id, interaction_id, withdraw(agent, workspace.id, interaction_id, **payload)
    )
    assert isinstance(refused, InvalidInput) and refused.code == "invalid_payload"


async def test_the_policy_clock_stops_and_every_copy_is_told(workspace: Workspace) -> None:
    declare_surface(Surface("email"))
    try:
        start = utcnow()
        policy = {"remindAfterS": 60, "escalateAfterS": 120, "escalateTo": ["usr_me"]}
        interaction_id, agent, _ = await asked(
            workspace, policy=policy, expiresAt=(start + timedelta(seconds=180)).isoformat()
        )
        assert (await Interaction.get(id=interaction_id)).policy_due_at is not None
        await withdraw(agent, workspace.id, interaction_id, reason="answered_in_terminal")
        after = await last_sequence(workspace.id)
        for seconds in (65, 125, 200):
            await PolicyClock(now=lambda s=seconds: start + timedelta(seconds=s)).run_once()
        assert await events_after(workspace.id, after) == []  # no reminder, escalation, expiry

        rows = await Notification.filter(interaction_id=interaction_id)
        sent = {(n.user_id, n.surface) for n in rows if n.kind == NotificationKind.WAITING}
        closed = {(n.user_id, n.surface) for n in rows if n.kind == NotificationKind.DECIDED}
        assert sent and closed == sent  # each copy the card reached is closed
    finally:
        withdraw_surface("email")
