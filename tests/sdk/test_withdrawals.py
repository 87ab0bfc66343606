"""``withdraw_interaction``: an SDK agent takes back its card when the terminal answered first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.store.models import Event, Interaction, InteractionStatus, Task
from hub.protocol.interactions import approval_card
from hub.sdk import Agent, Backoff, HubRefused
from tests.sdk.live import LiveHub, live_hub


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


def sdk_agent(hub: LiveHub, state_dir: Path, **options: object) -> Agent:
    return Agent(
        hub.url,
        state_dir=state_dir,
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        **options,  # type: ignore[arg-type]
    )


async def pending(interaction_id: str) -> None:
    async with asyncio.timeout(30):
        while not await Interaction.filter(  # noqa: ASYNC110 - the state is in another process
            id=interaction_id, status=InteractionStatus.PENDING
        ).exists():
            await asyncio.sleep(0.05)


async def test_a_withdrawn_card_ends_the_wait_and_stays_withdrawn_after_a_restart(
    hub: LiveHub, tmp_path: Path
) -> None:
    state = tmp_path / "agent"
    card = approval_card("Run `npm publish`?", risk="high").model_copy(update={"id": "int_publish"})
    agent = sdk_agent(hub, state, pairing_code=await hub.pairing_code(), name="Coder")
    async with agent:
        assert agent.agent_id is not None
        await hub.confirm(agent.agent_id, "Coder")
        task = await agent.create_task("Release 2.0")
        await task.accept()
        waiting = asyncio.create_task(task.request_interaction(card))
        await pending("int_publish")
        assert task.pending is not None and task.pending.id == "int_publish"

        ack = await task.withdraw_interaction(
            "int_publish", reason="answered_in_terminal", note="Published by hand"
        )
        assert ack.sequence is not None and not ack.duplicate
        answer = await asyncio.wait_for(waiting, 10)
        assert answer.withdrawn and answer.withdrawal_reason == "answered_in_terminal"
        assert not answer.approved and answer.option_id is None
        assert task.pending is None and task.status == "running"

        # Withdrawing again (a handler run once more) is the same envelope: a duplicate.
        again = await task.withdraw_interaction("int_publish", reason="answered_in_terminal")
        assert again.duplicate and again.sequence == ack.sequence

    stored = await Interaction.get(id="int_publish")
    assert stored.status == InteractionStatus.CANCELLED
    assert stored.withdrawal == {"reason": "answered_in_terminal", "note": "Published by hand"}
    assert (await Task.get(id=task.id)).status == "running"
    view = await hub.api("GET", "/interactions/int_publish")
    assert view["withdrawal"]["reason"] == "answered_in_terminal"
    assert await Event.filter(type="interaction.withdrawn").count() == 1

    # A restarted agent that asks the same card again is told at once: it was withdrawn.
    async with sdk_agent(hub, state) as restarted:
        answer = await asyncio.wait_for(restarted.request_interaction(card), 10)
        assert answer.withdrawn
    assert await Event.filter(type="interaction.requested").count() == 1


async def test_when_the_person_answers_first_the_withdrawal_is_refused_and_the_answer_arrives(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="Coder")
    async with agent:
        assert agent.agent_id is not None
        await hub.confirm(agent.agent_id, "Coder")
        card = approval_card("Delete `dist/`?").model_copy(update={"id": "int_dist"})
        waiting = asyncio.create_task(agent.request_interaction(card))
        await pending("int_dist")
        await hub.respond("int_dist", "approve")  # on the phone, before the terminal

        with pytest.raises(HubRefused) as late:
            await agent.withdraw_interaction("int_dist", reason="answered_in_terminal")
        assert late.value.code == "already_decided"
        assert late.value.details["details"]["response"] == {"optionId": "approve"}
        answer = await asyncio.wait_for(waiting, 10)
        assert answer.approved and not answer.withdrawn

        with pytest.raises(HubRefused) as unknown:
            await agent.withdraw_interaction("int_nothing")
        assert unknown.value.code == "interaction_not_found"
        with pytest.raises(ValueError):  # checked before anything is sent
            await agent.withdraw_interaction("int_dist", note="x" * 501)
    assert (await Interaction.get(id="int_dist")).status == InteractionStatus.RESOLVED
