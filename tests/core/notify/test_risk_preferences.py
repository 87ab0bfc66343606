""" "Only high-risk cards" and quiet hours that let high risk through, as rows are written.

Each rule is asked where rows of news are written: new cards, reminders, escalations and
failures. Updates of copies already sent are not news and are not held.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hub.core.errors import Conflict, InvalidInput
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.notify.preferences import (
    Surface,
    declare_surface,
    declare_surface_not_set_up,
    get_preferences,
    update_preferences,
    withdraw_surface,
)
from hub.core.store.models import Agent, User, Workspace
from hub.core.store.notification_models import Notification
from tests.core.scenario import make_agent, started_task


@pytest.fixture(autouse=True)
def surfaces() -> Iterator[None]:
    declare_surface(Surface("email"))
    declare_surface_not_set_up("telegram")
    yield
    withdraw_surface("email")
    withdraw_surface("telegram")


async def _ask(workspace: Workspace, agent: Agent, task_id: str, **card: Any) -> str:
    interaction_id = new_id("interaction")
    await append_event(
        workspace.id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?", **card}},
        actor=f"agent:{agent.id}",
        task_id=task_id,
    )
    return interaction_id


async def _fail(workspace: Workspace, agent: Agent, user: User) -> str:
    task_id = await started_task(workspace, agent, user)
    await append_event(
        workspace.id,
        "task.status_changed",
        {"taskId": task_id, "status": "failed", "error": "disk full"},
        actor=f"agent:{agent.id}",
    )
    return task_id


async def _rows(interaction_id: str, kind: str = "waiting") -> list[Notification]:
    return await Notification.filter(interaction_id=interaction_id, kind=kind)


def _quiet_now() -> dict[str, str]:
    now = datetime.now(UTC)
    return {
        "start": (now - timedelta(hours=1)).strftime("%H:%M"),
        "end": (now + timedelta(hours=1)).strftime("%H:%M"),
    }


async def test_only_high_risk_skips_lower_and_unstated_risk_but_not_failures(make_user) -> None:
    user, workspace = await make_user("ada")
    await update_preferences(user.id, {"onlyHighRisk": True})
    agent = await make_agent(workspace)
    task_id = await started_task(workspace, agent, user)
    low = await _ask(workspace, agent, task_id, risk="low")
    medium = await _ask(workspace, agent, task_id, risk="medium")
    unstated = await _ask(workspace, agent, task_id)
    high = await _ask(workspace, agent, task_id, risk="high")
    assert [await _rows(i) for i in (low, medium, unstated)] == [[], [], []]
    assert [r.surface for r in await _rows(high)] == ["email"]

    failing = await _fail(workspace, agent, user)
    failed = await Notification.filter(task_id=failing, kind="failed")
    assert [r.surface for r in failed] == ["email"]


async def test_only_high_risk_holds_reminders_and_escalations_to_the_same_rule(
    make_user,
) -> None:
    ada, workspace = await make_user("ada")
    agent = await make_agent(workspace)
    task_id = await started_task(workspace, agent, ada)
    medium = await _ask(workspace, agent, task_id, risk="medium")
    high = await _ask(workspace, agent, task_id, risk="high")
    await update_preferences(ada.id, {"onlyHighRisk": True})
    for interaction_id in (medium, high):
        await append_event(
            workspace.id,
            "interaction.reminded",
            {"interactionId": interaction_id, "to": [ada.id]},
            actor="hub:policy",
            task_id=task_id,
        )
    assert await _rows(medium, "reminder") == []
    assert [r.surface for r in await _rows(high, "reminder")] == ["email"]

    policy = {"escalateTo": [ada.id], "escalateAfterS": 60}
    await update_preferences(ada.id, {"onlyHighRisk": False})
    unstated = await _ask(workspace, agent, task_id, policy=policy)
    high = await _ask(workspace, agent, task_id, policy=policy, risk="high")
    await Notification.filter(interaction_id__in=[unstated, high]).delete()
    await update_preferences(ada.id, {"onlyHighRisk": True})
    for interaction_id in (unstated, high):
        await append_event(
            workspace.id,
            "interaction.escalated",
            {"interactionId": interaction_id},
            actor="hub:policy",
            task_id=task_id,
        )
    assert await _rows(unstated) == []  # a card without a risk counts as medium
    assert [r.surface for r in await _rows(high)] == ["email"]


async def test_quiet_hours_hold_high_risk_unless_let_through(make_user) -> None:
    user, workspace = await make_user("ada")
    await update_preferences(user.id, {"quietHours": _quiet_now()})
    agent = await make_agent(workspace)
    task_id = await started_task(workspace, agent, user)
    soon = datetime.now(UTC) + timedelta(minutes=50)

    held = await _ask(workspace, agent, task_id, risk="high")
    assert (await _rows(held))[0].next_attempt_at > soon

    view = await update_preferences(
        user.id, {"quietHours": {**_quiet_now(), "letHighRiskThrough": True}}
    )
    assert view["quietHours"]["letHighRiskThrough"] is True
    high = await _ask(workspace, agent, task_id, risk="high")
    medium = await _ask(workspace, agent, task_id, risk="medium")
    unstated = await _ask(workspace, agent, task_id)
    assert (await _rows(high))[0].next_attempt_at < soon
    assert (await _rows(medium))[0].next_attempt_at > soon
    assert (await _rows(unstated))[0].next_attempt_at > soon

    failed = await Notification.get(task_id=await _fail(workspace, agent, user), kind="failed")
    assert failed.next_attempt_at > soon  # a failure is no high-risk card


async def test_bad_risk_preferences_and_surfaces_not_set_up_change_nothing(make_user) -> None:
    user, _ = await make_user("ada")
    before = await get_preferences(user.id)
    assert before["onlyHighRisk"] is False
    assert before["surfacesNotSetUp"] == ["telegram"] and "telegram" not in before["surfaces"]
    for change in (
        {"onlyHighRisk": "yes", "surfaces": {"email": {"waiting": False}}},
        {"quietHours": {**_quiet_now(), "letHighRiskThrough": 1}},
    ):
        with pytest.raises(InvalidInput) as refused:
            await update_preferences(user.id, change)
        assert refused.value.code == "invalid_preferences"
    with pytest.raises(Conflict) as refused_surface:
        await update_preferences(
            user.id, {"onlyHighRisk": True, "surfaces": {"telegram": {"waiting": False}}}
        )
    assert refused_surface.value.code == "surface_not_set_up"
    assert await get_preferences(user.id) == before
