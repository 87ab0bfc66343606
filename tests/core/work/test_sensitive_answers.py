"""What people see of sensitive answers, and what it costs to know which answers those are."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from hub.core.log.bus import EventBus
from hub.core.log.envelopes import to_published
from hub.core.log.events import append_event, events_after, last_sequence
from hub.core.store.models import Event, Workspace
from hub.core.work import sensitive_answers
from hub.core.work.interactions import interaction_detail, respond_to_interaction
from hub.core.work.sensitive_answers import (
    Sensitivity,
    envelopes_for_people,
    people_feed,
    published_for_people,
)
from hub.core.work.tasks import create_task
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent

ME = "user:usr_me"
SECRET = "hunter2-token"


@pytest.fixture
def sensitivity(monkeypatch: pytest.MonkeyPatch) -> Sensitivity:
    """A memory of its own, so each test counts its own lookups."""
    fresh = Sensitivity()
    monkeypatch.setattr(sensitive_answers, "SENSITIVITY", fresh)
    return fresh


async def answered_cards(workspace: Workspace) -> tuple[str, dict[str, str]]:
    """An agent asks three sensitive inputs, an ordinary input and an approval; ME answers
    each. Returns the agent's id and each card's id by what it is."""
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "publish", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    sensitive_input = {"type": "input", "title": "Token?", "input": {"sensitive": True}}
    cards = {
        **{f"secret{n}": await agent_asks(agent, task.id, **sensitive_input) for n in range(3)},
        "plain": await agent_asks(agent, task.id, type="input", title="Name?"),
        "approval": await agent_asks(agent, task.id),
    }
    for what, card_id in cards.items():
        answer = {"optionId": "approve"} if what == "approval" else {"text": f"{SECRET}-{what}"}
        await respond_to_interaction(workspace.id, card_id, answer, responder=ME, via="web")
    return agent.id, cards


async def test_a_page_of_events_costs_one_lookup_and_hides_only_sensitive_answers(
    workspace: Workspace, sensitivity: Sensitivity
) -> None:
    agent_id, cards = await answered_cards(workspace)
    page = await events_after(workspace.id, 0)
    shown = await envelopes_for_people(workspace.id, page)
    assert sensitivity.lookups == 1
    answers = {
        e["payload"]["interactionId"]: e["payload"]["response"]
        for e in shown
        if e["type"] == "interaction.resolved"
    }
    for n in range(3):
        assert answers[cards[f"secret{n}"]] == {"hidden": True}
    assert answers[cards["plain"]] == {"text": f"{SECRET}-plain"}
    assert answers[cards["approval"]] == {"optionId": "approve"}
    # The person still reads who answered and via what.
    secret_event = next(e for e in shown if e["payload"].get("interactionId") == cards["secret0"])
    assert secret_event["payload"]["respondedBy"] == ME
    assert secret_event["payload"]["via"] == "web"
    # Known now: the next page asks the database nothing.
    await envelopes_for_people(workspace.id, page)
    assert sensitivity.lookups == 1

    # The log and the agent's downlink still hold the text: the agent asked for it.
    stored = await Event.filter(workspace_id=workspace.id, type="interaction.resolved")
    assert f"{SECRET}-secret0" in str([e.payload for e in stored])
    downlink = await events_after(workspace.id, 0, recipient_agent_id=agent_id)
    assert {"text": f"{SECRET}-secret0"} in [e.payload.get("response") for e in downlink]
    # A person's view of the card itself hides it as well.
    detail = await interaction_detail(workspace.id, cards["secret0"])
    assert detail["response"] == {"hidden": True} and detail["respondedBy"] == ME


async def test_a_thousand_readers_of_one_answer_share_one_lookup(
    workspace: Workspace, sensitivity: Sensitivity
) -> None:
    _, cards = await answered_cards(workspace)
    [sequence] = await _sequences_of(workspace, cards["secret1"])
    published = to_published(await Event.get(workspace_id=workspace.id, sequence=sequence))
    other = to_published(await Event.get(workspace_id=workspace.id, sequence=1))
    # One event handed to a thousand browser sockets at once, as the bus does.
    views = await asyncio.gather(
        *(published_for_people(workspace.id, [published, other]) for _ in range(1000))
    )
    assert sensitivity.lookups == 1
    for shown, untouched in views:
        assert shown.envelope["payload"]["response"] == {"hidden": True}
        assert SECRET not in shown.text()
        assert untouched is other  # nothing to hide: the same object, its text shared
    assert published.envelope["payload"]["response"] == {"text": f"{SECRET}-secret1"}


async def test_a_typed_answer_to_a_card_the_workspace_lacks_is_hidden(
    workspace: Workspace, sensitivity: Sensitivity
) -> None:
    _, cards = await answered_cards(workspace)
    [sequence] = await _sequences_of(workspace, cards["plain"])
    event = to_published(await Event.get(workspace_id=workspace.id, sequence=sequence))
    payload = {**event.envelope["payload"], "interactionId": "interaction_unknown"}
    forged = replace(event, envelope={**event.envelope, "payload": payload}, _text=None)
    [shown] = await published_for_people(workspace.id, [forged])
    assert shown.envelope["payload"]["response"] == {"hidden": True}
    # Not remembered: a card that exists later is looked up again.
    await published_for_people(workspace.id, [forged])
    assert sensitivity.lookups == 2


async def test_the_people_feed_hides_answers_in_the_backlog_and_live(
    workspace: Workspace, sensitivity: Sensitivity
) -> None:
    await join(workspace.id, ME)
    agent = await make_agent(workspace)
    sensitive_input = {"type": "input", "title": "Token?", "input": {"sensitive": True}}
    first = await agent_asks(agent, None, **sensitive_input)
    second = await agent_asks(agent, None, **sensitive_input)
    await respond_to_interaction(workspace.id, first, {"text": SECRET}, responder=ME, via="web")
    bus = EventBus()
    async with people_feed(workspace.id, 0, bus=bus) as feed:
        events = aiter(feed)
        backlog = [await anext(events) for _ in range(await last_sequence(workspace.id))]
        result = await append_event(
            workspace.id,
            "interaction.resolved",
            {
                "interactionId": second,
                "response": {"text": SECRET},
                "respondedBy": ME,
                "via": "web",
            },
            actor=ME,
            bus=bus,
        )
        live = await asyncio.wait_for(anext(events), timeout=10)
    assert live.sequence == result.sequence
    for event in [*backlog, live]:
        assert SECRET not in event.text()
    assert sum(e.type == "interaction.resolved" for e in [*backlog, live]) == 2


async def _sequences_of(workspace: Workspace, card_id: str) -> list[int]:
    events = await Event.filter(workspace_id=workspace.id, type="interaction.resolved")
    return [int(e.sequence) for e in events if e.payload.get("interactionId") == card_id]
