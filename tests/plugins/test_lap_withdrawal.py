"""``interaction.withdrawn`` over a real socket: an agent takes back the card it asked."""

from __future__ import annotations

from typing import Any

from hub.core.log.events import append_event, events_after, last_sequence
from hub.core.store.models import Interaction, InteractionStatus, Task, Workspace
from hub.core.task_states import TaskStatus
from hub.core.work.interactions import interaction_detail
from hub.testing import HubProcess
from tests.plugins.lap_client import RawAgent, raw_agent
from tests.plugins.test_lap_gateway import assign_task, paired

OWNER = "user:usr_owner"


async def ask(agent: RawAgent, task_id: str) -> str:
    """Accept ``task_id`` and ask a card about it; returns the card's id."""
    assert (await agent.call("task.accepted", {"taskId": task_id}))["type"] == "ack"
    card = {"type": "approval", "title": "Run `rm -rf build/`?", "risk": "medium"}
    ack = await agent.call("interaction.requested", {"interaction": card}, taskId=task_id)
    assert ack["type"] == "ack", ack
    return str(ack["payload"]["interactionId"])


def error_of(answer: dict[str, Any]) -> tuple[str, str]:
    assert answer["type"] == "error", answer
    assert answer["payload"]["hint"], answer
    return answer["payload"]["code"], answer["payload"]["message"]


async def test_an_agent_withdraws_its_card_and_a_resend_is_a_duplicate(
    hub: HubProcess, workspace: Workspace
) -> None:
    agent_id, credential = await paired(hub, workspace)
    task_id = await assign_task(workspace, agent_id)
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        await agent.downlink()  # task.assigned
        interaction_id = await ask(agent, task_id)
        assert (await Task.get(id=task_id)).status == TaskStatus.WAITING_FOR_HUMAN

        withdrawal = {
            "interactionId": interaction_id,
            "reason": "answered_in_terminal",
            "note": "Allowed in the terminal",
        }
        envelope_id = await agent.send("interaction.withdrawn", withdrawal, taskId=task_id)
        ack = await agent.answer(envelope_id)
        assert ack["type"] == "ack", ack
        assert ack["payload"]["interactionId"] == interaction_id
        assert ack["payload"]["duplicate"] is False
        sequence = ack["payload"]["sequence"]

        # The same envelope again (a resend after a lost ack): stored once.
        await agent.send("interaction.withdrawn", withdrawal, id=envelope_id, taskId=task_id)
        again = await agent.answer(envelope_id)
        assert again["type"] == "ack", again
        assert again["payload"]["duplicate"] is True and again["payload"]["sequence"] == sequence
        assert await last_sequence(workspace.id) == sequence
        # Nothing comes back to the agent for its own withdrawal.
        assert [f for f in await agent.quiet(1.0) if f["type"] != "ack"] == []

    card = await Interaction.get(id=interaction_id)
    assert card.status == InteractionStatus.CANCELLED
    assert card.withdrawal == {"reason": "answered_in_terminal", "note": "Allowed in the terminal"}
    assert (await Task.get(id=task_id)).status == TaskStatus.RUNNING
    view = await interaction_detail(workspace.id, interaction_id)
    assert view["status"] == "cancelled" and view["withdrawal"]["reason"] == "answered_in_terminal"


async def test_another_agent_and_a_decided_card_are_refused_with_their_codes(
    hub: HubProcess, workspace: Workspace
) -> None:
    mine, credential = await paired(hub, workspace, "mine")
    _, other_credential = await paired(hub, workspace, "other")
    task_id = await assign_task(workspace, mine)
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        await agent.downlink()
        interaction_id = await ask(agent, task_id)
        before = await last_sequence(workspace.id)

        async with raw_agent(hub.url, other_credential) as (other, _):
            await other.hello()
            code, _ = error_of(
                await other.call("interaction.withdrawn", {"interactionId": interaction_id})
            )
            assert code == "interaction_not_yours"
            code, _ = error_of(await other.call("interaction.withdrawn", {"interactionId": "nope"}))
            assert code == "interaction_not_found"

        code, message = error_of(
            await agent.call(
                "interaction.withdrawn", {"interactionId": interaction_id, "reason": "bored"}
            )
        )
        assert code == "invalid_payload" and "reason" in message
        # Nothing was stored (the sockets' comings and goings are, as always).
        stored = {e.type for e in await events_after(workspace.id, before)}
        assert "interaction.withdrawn" not in stored, stored
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING

        # The person answers first: the agent's withdrawal comes too late and says so.
        await append_event(
            workspace.id,
            "interaction.resolved",
            {
                "interactionId": interaction_id,
                "response": {"optionId": "approve"},
                "respondedBy": OWNER,
                "via": "telegram",
            },
            actor=OWNER,
        )
        late = await agent.call("interaction.withdrawn", {"interactionId": interaction_id})
        code, _ = error_of(late)
        assert code == "already_decided"
        details = late["payload"]["details"]
        assert details["response"] == {"optionId": "approve"} and details["via"] == "telegram"
    card = await Interaction.get(id=interaction_id)
    assert card.status == InteractionStatus.RESOLVED and card.withdrawal is None
