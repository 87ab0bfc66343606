"""Answering interaction cards: first answer wins, the rest learn who, how and when."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from hub.core.errors import AlreadyDecided, Gone, InvalidInput, NotFound
from hub.core.log.events import events_after, last_sequence
from hub.core.people.accounts import create_user
from hub.core.store.models import Workspace
from hub.core.work import deliveries
from hub.core.work.deliveries import record_delivery
from hub.core.work.interactions import (
    get_interaction,
    interaction_detail,
    list_interactions,
    respond_to_interaction,
)
from hub.core.work.tasks import create_task
from hub.protocol.clock import utcnow
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent

ME = "user:usr_me"


async def asked(workspace: Workspace, **card: object) -> tuple[str, str]:
    """A running task whose agent asks ME a card; returns (interaction id, agent id)."""
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "deploy", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    return await agent_asks(agent, task.id, **card), agent.id


async def test_an_answer_resolves_the_card_and_reaches_the_agent(workspace: Workspace) -> None:
    interaction_id, agent_id = await asked(workspace)
    after = await last_sequence(workspace.id)
    resolved = await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"optionId": "approve", "comment": "go ahead"},
        responder=ME,
        via="web",
    )
    assert resolved.status == "resolved"
    assert resolved.response == {"optionId": "approve", "comment": "go ahead"}
    assert (resolved.responded_by, resolved.responded_via) == (ME, "web")
    [routed] = await events_after(workspace.id, after, recipient_agent_id=agent_id)
    assert routed.type == "interaction.resolved"
    assert routed.payload["respondedBy"] == ME and routed.payload["via"] == "web"


async def test_a_second_answer_says_who_how_and_when(make_user) -> None:  # type: ignore[no-untyped-def]
    user, workspace = await make_user("alice")
    interaction_id, _ = await asked(workspace)
    alice = f"user:{user.id}"
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=alice, via="telegram"
    )
    before = await last_sequence(workspace.id)
    with pytest.raises(AlreadyDecided) as late:
        await respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "reject"}, responder=ME, via="web"
        )
    details = late.value.details
    assert late.value.status == 409 and late.value.code == "already_decided"
    assert details["respondedBy"] == alice and details["respondedByName"] == "alice"
    assert details["via"] == "telegram" and details["respondedAt"].endswith("Z")
    assert details["response"] == {"optionId": "approve"}
    assert "alice" in late.value.message and "telegram" in late.value.message
    assert await last_sequence(workspace.id) == before
    assert (await get_interaction(workspace.id, interaction_id)).response == {"optionId": "approve"}


async def test_concurrent_answers_exactly_one_wins(workspace: Workspace) -> None:
    interaction_id, _ = await asked(workspace)
    for n in range(10):
        await join(workspace.id, f"user:usr_{n}")
    outcomes = await asyncio.gather(
        *(
            respond_to_interaction(
                workspace.id,
                interaction_id,
                {"optionId": "approve" if n % 2 else "reject"},
                responder=f"user:usr_{n}",
                via="web",
            )
            for n in range(10)
        ),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    assert len(winners) == 1 and len(losers) == 9
    resolved = [e for e in await events_after(workspace.id, 0) if e.type == "interaction.resolved"]
    assert len(resolved) == 1
    assert all(loser.details["respondedBy"] == resolved[0].actor for loser in losers)


async def test_an_answer_that_does_not_fit_changes_nothing(workspace: Workspace) -> None:
    interaction_id, _ = await asked(workspace)
    before = await last_sequence(workspace.id)
    for bad in ({"optionId": "maybe"}, {}, {"text": "approve"}):
        with pytest.raises(InvalidInput) as refused:
            await respond_to_interaction(workspace.id, interaction_id, bad, responder=ME, via="api")
        assert refused.value.code == "invalid_response"
    with pytest.raises(InvalidInput):
        await respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="Web Page!"
        )
    assert await last_sequence(workspace.id) == before
    assert (await get_interaction(workspace.id, interaction_id)).status == "pending"


async def test_input_cards_check_the_format(workspace: Workspace) -> None:
    interaction_id, _ = await asked(
        workspace, type="input", title="Test environment URL?", input={"format": "url"}
    )
    with pytest.raises(InvalidInput):
        await respond_to_interaction(
            workspace.id, interaction_id, {"text": "not a url"}, responder=ME, via="web"
        )
    resolved = await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"text": " https://test.example.com "},
        responder=ME,
        via="web",
    )
    assert resolved.response == {"text": "https://test.example.com"}


async def test_multi_select_choice(workspace: Workspace) -> None:
    interaction_id, _ = await asked(
        workspace,
        type="choice",
        title="Regions?",
        multiple=True,
        options=[
            {"id": "eu", "label": "EU"},
            {"id": "us", "label": "US"},
            {"id": "ap", "label": "AP"},
        ],
    )
    resolved = await respond_to_interaction(
        workspace.id, interaction_id, {"optionIds": ["ap", "eu"]}, responder=ME, via="web"
    )
    assert resolved.response == {"optionIds": ["eu", "ap"]}


async def test_an_expired_card_takes_no_answer(workspace: Workspace) -> None:
    # Already past when asked: nothing depends on how long the test takes.
    interaction_id, _ = await asked(
        workspace, expiresAt=(utcnow() - timedelta(minutes=1)).isoformat()
    )
    detail = await interaction_detail(workspace.id, interaction_id)
    assert detail["status"] == "expired"
    with pytest.raises(Gone) as gone:
        await respond_to_interaction(
            workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
        )
    assert gone.value.code == "interaction_expired"


async def test_a_repeated_request_is_answered_once(workspace: Workspace) -> None:
    interaction_id, _ = await asked(workspace)
    first = await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"optionId": "approve"},
        responder=ME,
        via="web",
        idempotency_key="click-1",
    )
    again = await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"optionId": "approve"},
        responder=ME,
        via="web",
        idempotency_key="click-1",
    )
    assert again.responded_at == first.responded_at
    resolved = [e for e in await events_after(workspace.id, 0) if e.type == "interaction.resolved"]
    assert len(resolved) == 1


async def test_another_workspace_card_is_not_found(make_user) -> None:  # type: ignore[no-untyped-def]
    _, mine = await make_user()
    _, theirs = await make_user()
    interaction_id, _ = await asked(theirs)
    with pytest.raises(NotFound):
        await get_interaction(mine.id, interaction_id)
    with pytest.raises(NotFound):
        await respond_to_interaction(
            mine.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
        )
    assert await list_interactions(mine.id) == []
    assert (await get_interaction(theirs.id, interaction_id)).status == "pending"


async def test_the_detail_names_the_person_who_answered(db: str) -> None:
    user, workspace = await create_user("bea@example.com", "correct horse", "Bea")
    interaction_id, _ = await asked(workspace)
    await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"optionId": "reject"},
        responder=f"user:{user.id}",
        via="email",
    )
    detail = await interaction_detail(workspace.id, interaction_id)
    assert detail["respondedByName"] == "Bea" and detail["via"] == "email"
    assert detail["card"]["title"] == "Run the migration?"
    assert [o["id"] for o in detail["card"]["options"]] == ["approve", "reject"]


async def test_an_answer_sent_again_is_not_recorded_as_delivered_again(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent that reconnects from an older position is sent its answers again; their
    delivery stands from the first time, so the replay appends nothing to the log (each
    would be a write the agent's next frames wait behind, one answer after another)."""
    interaction_id, agent_id = await asked(workspace)
    after = await last_sequence(workspace.id)
    await respond_to_interaction(
        workspace.id, interaction_id, {"optionId": "approve"}, responder=ME, via="web"
    )
    [resolved] = await events_after(workspace.id, after, recipient_agent_id=agent_id)
    await record_delivery(resolved)
    first = (await get_interaction(workspace.id, interaction_id)).delivered_at
    assert first is not None
    appended: list[str] = []
    real = deliveries.append_event

    async def counted(*args: Any, **kwargs: Any) -> Any:
        appended.append(args[1])
        return await real(*args, **kwargs)

    monkeypatch.setattr(deliveries, "append_event", counted)
    await record_delivery(resolved)
    assert appended == []
    assert (await get_interaction(workspace.id, interaction_id)).delivered_at == first
