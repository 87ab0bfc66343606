"""An agent that is away, as the pages say it: on its tasks and cards "Connection lost",
an answer meanwhile queued until it returns, and the card saying when it was delivered."""

from __future__ import annotations

import pytest

from hub.core.errors import Forbidden
from hub.core.log.events import append_event, events_after
from hub.core.store.models import Agent, AgentStatus
from hub.core.work.deliveries import record_delivery
from hub.protocol.clock import utcnow
from tests.web.pages.world import build_world

LOST = 'data-status="lost"'


async def test_an_away_agents_task_and_card_say_so_and_an_answer_waits_for_it(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    card_id = world.cards["choice"]
    task_page = ada.w(f"/tasks/{world.task_id}")
    _status, html = await ada.page(task_page)
    assert "Waiting for you" in html and LOST not in html

    await Agent.filter(id=world.agent.id).update(
        status=AgentStatus.OFFLINE, last_heartbeat_at=utcnow()
    )
    # Waiting for a person, not running: it says so in the task's header and on its card.
    _status, html = await ada.page(task_page)
    header, cards = html.split("<h3>Decisions</h3>", 1)
    assert LOST in header and LOST in cards
    for path in ("/tasks", "/inbox", f"/interactions/{card_id}"):
        _status, html = await ada.page(ada.w(path))
        assert LOST in html, path
    _status, html = await ada.page(ada.w("/tasks"))
    rows = html.split('data-live="task-list"', 1)[1].split("</ul>", 1)[0]
    assert LOST in rows  # the list's own row, not only the selected task's panel

    response = await ada.post(
        ada.w(f"/interactions/{card_id}/respond"),
        {"optionId": "eu", "next": task_page},
        token_from=task_page,
    )
    assert response.status_code == 302
    _status, html = await ada.page(task_page)
    assert "Your answer is queued until the agent returns." in html
    assert "sent to the agent" not in html
    assert 'data-delivery="waiting"' in html and "the agent is away" in html

    # The agent is back and its gateway sent it the answer: the card says when.
    await Agent.filter(id=world.agent.id).update(status=AgentStatus.ONLINE)
    resolved = [
        e for e in await events_after(ada.workspace_id, 0) if e.type == "interaction.resolved"
    ]
    await record_delivery(resolved[-1])
    await record_delivery(resolved[-1])  # sent again in a replay: the first time stands
    _status, html = await ada.page(task_page)
    assert 'data-delivery="delivered"' in html and "Delivered to the agent at" in html
    assert LOST not in html
    delivered = [
        e for e in await events_after(ada.workspace_id, 0) if e.type == "interaction.delivered"
    ]
    assert len(delivered) == 1 and delivered[0].task_id == world.task_id
    api = await ada.client.get(f"/api/v1/workspaces/{ada.workspace_id}/interactions/{card_id}")
    assert (await api.get_json())["deliveredAt"] is not None


async def test_an_answer_to_a_present_agent_is_sent(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    card_id = world.cards["choice"]
    response = await ada.post(
        ada.w(f"/interactions/{card_id}/respond"), {"optionId": "eu"}, token_from=ada.w("/inbox")
    )
    assert response.status_code == 302
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert "Your answer was sent to the agent." in html
    assert "data-delivery" not in html and LOST not in html


async def test_only_the_hub_records_a_delivery(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    with pytest.raises(Forbidden) as refused:
        await append_event(
            ada.workspace_id,
            "interaction.delivered",
            {"interactionId": world.cards["choice"], "sequence": 1},
            actor=f"agent:{world.agent.id}",
        )
    assert refused.value.code == "not_allowed"
