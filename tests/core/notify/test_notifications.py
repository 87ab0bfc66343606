"""Notification rows are written with their cause, once, for whoever wants them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from hub.core.errors import Conflict
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.notify.notifications import may_enqueue
from hub.core.notify.preferences import (
    Surface,
    declare_surface,
    get_preferences,
    quiet_until,
    update_preferences,
    withdraw_surface,
)
from hub.core.store.models import Agent, Workspace
from hub.core.store.notification_models import ChannelAccount, Notification, NotificationSettings
from hub.core.work.interactions import respond_to_interaction
from tests.core.scenario import make_agent, started_task


@pytest.fixture(autouse=True)
def surfaces() -> Iterator[None]:
    declare_surface(Surface("email"))
    declare_surface(Surface("telegram", needs_account=True))
    yield
    withdraw_surface("email")
    withdraw_surface("telegram")


async def _ask(
    workspace: Workspace, agent: Agent, task_id: str, envelope_id: str | None = None
) -> str:
    interaction_id = new_id("interaction")
    await append_event(
        workspace.id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
        actor=f"agent:{agent.id}",
        task_id=task_id,
        envelope_id=envelope_id,
    )
    return interaction_id


async def test_a_card_notifies_each_wanted_surface_once(make_user) -> None:
    user, workspace = await make_user("ada")
    agent = await make_agent(workspace)
    task_id = await started_task(workspace, agent, user)
    interaction_id = await _ask(workspace, agent, task_id, envelope_id="ask-1")
    # The same envelope again is a duplicate event: no second notification.
    await append_event(
        workspace.id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
        actor=f"agent:{agent.id}",
        task_id=task_id,
        envelope_id="ask-1",
    )
    rows = await Notification.filter(interaction_id=interaction_id)
    assert [(r.surface, r.kind) for r in rows] == [("email", "waiting")]  # no Telegram linked

    await respond_to_interaction(
        workspace.id,
        interaction_id,
        {"optionId": "approve"},
        responder=f"user:{user.id}",
        via="web",
    )
    kinds = sorted(
        await Notification.filter(interaction_id=interaction_id).values_list("kind", flat=True)
    )
    assert kinds == ["decided", "waiting"]


async def test_only_types_that_may_enqueue_write_rows(make_user) -> None:
    """``may_enqueue`` decides when the outbox worker is woken: it must pass every type
    that writes a row, and it spares the worker chat messages."""
    user, workspace = await make_user("ada")
    agent = await make_agent(workspace)
    writers: set[str] = set()

    async def append(type: str, payload: dict[str, object], **fields: str) -> None:
        before = await Notification.all().count()
        await append_event(workspace.id, type, payload, **fields)  # type: ignore[arg-type]
        if await Notification.all().count() > before:
            writers.add(type)

    conversation_id = new_id("conversation")
    await append(
        "conversation.created",
        {"conversationId": conversation_id, "title": "c", "agentIds": [agent.id]},
        actor=f"user:{user.id}",
    )
    await append(
        "message.created",
        {"conversationId": conversation_id, "messageId": new_id("message"), "content": "hi"},
        actor=f"agent:{agent.id}",
        conversation_id=conversation_id,
    )
    task_id = await started_task(workspace, agent, user)
    await append(
        "interaction.requested",
        {"interaction": {"id": new_id("interaction"), "type": "approval", "title": "Go?"}},
        actor=f"agent:{agent.id}",
        task_id=task_id,
    )
    failing_id = await started_task(workspace, agent, user)
    await append(
        "task.status_changed",
        {"taskId": failing_id, "status": "failed", "error": "boom"},
        actor=f"agent:{agent.id}",
        task_id=failing_id,
    )
    assert writers == {"interaction.requested", "task.status_changed"}
    assert all(may_enqueue(type) for type in writers)
    assert not may_enqueue("message.created") and not may_enqueue("agent.online")


async def test_a_refused_event_writes_no_notification(make_user) -> None:
    user, workspace = await make_user("ada")
    agent = await make_agent(workspace)
    task_id = new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "Deploy", "targetAgentId": agent.id},
        actor=f"user:{user.id}",
    )
    with pytest.raises(Conflict):  # a queued task cannot ask a person yet
        await _ask(workspace, agent, task_id)
    assert await Notification.all().count() == 0


async def test_preferences_choose_surfaces_and_events(make_user) -> None:
    user, workspace = await make_user("ada")
    agent = await make_agent(workspace)
    await ChannelAccount.create(
        id=new_id("channel_account"),
        user_id=user.id,
        surface="telegram",
        external_id="42",
        address="42",
        linked_at=datetime.now(UTC),
    )
    view = await update_preferences(user.id, {"surfaces": {"email": {"waiting": False}}})
    assert view["surfaces"]["email"] == {"waiting": False, "failed": True}
    assert view["surfaces"]["telegram"] == {"waiting": True, "failed": True}
    task_id = await started_task(workspace, agent, user)
    await _ask(workspace, agent, task_id)
    assert await Notification.all().values_list("surface", flat=True) == ["telegram"]

    await append_event(
        workspace.id,
        "task.status_changed",
        {"taskId": task_id, "status": "cancelled"},
        actor=f"agent:{agent.id}",
    )
    other = await started_task(workspace, agent, user)
    await append_event(
        workspace.id,
        "task.status_changed",
        {"taskId": other, "status": "failed", "error": "disk full"},
        actor=f"agent:{agent.id}",
    )
    failed = await Notification.filter(kind="failed").values_list("surface", "task_id")
    assert sorted(failed) == [("email", other), ("telegram", other)]
    # The card cancelled with its task turns read-only where it was sent.
    assert await Notification.filter(kind="decided").values_list("surface", flat=True) == [
        "telegram"
    ]


async def test_unknown_surfaces_and_bad_quiet_hours_are_refused(make_user) -> None:
    user, _ = await make_user("ada")
    from hub.core.errors import InvalidInput

    for change in (
        {"surfaces": {"pager": {"waiting": True}}},
        {"surfaces": {"email": {"sometimes": True}}},
        {"quietHours": {"start": "25:00", "end": "07:00"}},
        {"timezone": "Mars/Olympus"},
        {"language": "fr"},
    ):
        with pytest.raises(InvalidInput):
            await update_preferences(user.id, change)
    assert (await get_preferences(user.id))["quietHours"] is None


async def test_quiet_hours_hold_notifications_until_they_end(make_user) -> None:
    user, workspace = await make_user("ada")
    now = datetime.now(UTC)
    start = (now - timedelta(hours=1)).strftime("%H:%M")
    end = (now + timedelta(hours=1)).strftime("%H:%M")
    await update_preferences(user.id, {"quietHours": {"start": start, "end": end}})
    settings = await NotificationSettings.get(user_id=user.id)
    ends = quiet_until(settings, now)
    assert ends is not None and now < ends <= now + timedelta(hours=1)

    agent = await make_agent(workspace)
    await _ask(workspace, agent, await started_task(workspace, agent, user))
    row = await Notification.get(kind="waiting")
    assert row.next_attempt_at > now + timedelta(minutes=50)
