"""Notifications are written with the event that causes them: the outbox's write side.

``enqueue_for`` runs inside ``append_event``'s transaction (called by the projection, never
while replaying), after the event's projection applied, so a notification exists if and only
if its cause was committed. Three causes:

* ``interaction.requested`` → "waiting for you" to each member who wants it, per surface;
* a task reaching ``failed`` → "failed", likewise;
* an approval policy's reminder or escalation (``interaction.reminded`` / ``.escalated``) →
  "waiting for you" again, to the people it names (a reminder goes to a surface the card
  has not reached yet, when there is one);
* a quorum vote (``interaction.voted``) → "updated" on each surface that was sent the card,
  so every copy shows the new count;
* a card leaving ``pending`` (answered, expired, withdrawn by its agent, or cancelled with
  its task) → "decided" on each surface that was sent the card, so every copy turns
  read-only with the outcome.

Whether a card's news reaches a person at all, and when, is ``due_at``'s answer (their
"only high-risk cards" and quiet hours), asked for every row of news: new cards, reminders,
escalations and failures. Updates of a copy already sent are not news and go at once.

Each row has a unique ``dedupe_key`` (cause × person × surface). The workspace's sequence
row is locked for the whole transaction, so checking the keys before inserting cannot race
with another append to the same workspace, and no insert ever fails on the unique index (on
PostgreSQL a failed statement would abort the event's transaction).

Rows hold ids only. Bodies are rendered when delivered, from the card's current state, by
code that never shows a sensitive input's text (spec §11).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import linked_surfaces
from hub.core.notify.preferences import due_at, enabled, settings_for, surfaces
from hub.core.store.models import Event, Interaction, InteractionStatus, Membership, Role, Task
from hub.core.store.notification_models import (
    Notification,
    NotificationKind,
    NotificationSettings,
    NotificationStatus,
)
from hub.core.task_states import TERMINAL_STATUSES, TaskStatus

Connection = Any

# Every event type ``enqueue_for`` writes rows for, besides the task's own events.
_CARD_EVENTS = frozenset(
    {
        "interaction.requested",
        "interaction.resolved",
        "interaction.expired",
        "interaction.withdrawn",  # its agent took it back: every copy closes
        "interaction.escalated",  # the fallback approvers are asked
        "interaction.reminded",  # a reminder on a second surface
        "interaction.voted",  # the other approvers' copies show the new count
    }
)


def may_enqueue(event_type: str) -> bool:
    """Whether ``enqueue_for`` can write rows for an event of this type.

    The outbox worker is woken after commits of these only: waking it for every chat
    message or presence change cost each append a second transaction (the worker's claim)
    on the same database.
    """
    return event_type in _CARD_EVENTS or event_type.startswith("task.")


async def enqueue_for(event: Event, connection: Connection) -> None:
    if not may_enqueue(event.type):
        return
    if event.type == "interaction.requested":
        interaction_id = (event.payload.get("interaction") or {}).get("id")
        if interaction_id:
            await _enqueue_waiting(event, connection, interaction_id)
    elif event.type in ("interaction.resolved", "interaction.expired", "interaction.withdrawn"):
        await _enqueue_decided(event, connection, [event.payload["interactionId"]])
    elif event.type == "interaction.escalated":
        await _enqueue(
            event,
            connection,
            NotificationKind.WAITING,
            "waiting",
            interaction_id=event.payload["interactionId"],
            only=[str(u) for u in event.payload.get("escalateTo") or []],
        )
    elif event.type == "interaction.reminded":
        await _enqueue_reminders(event, connection)
    elif event.type == "interaction.voted":
        await _enqueue_updated(event, connection)
    if event.task_id and event.type.startswith("task."):
        task = await Task.filter(id=event.task_id).using_db(connection).first()
        if task is not None and task.status in TERMINAL_STATUSES:
            # A task's end cancels its pending cards in bulk, without events of their own.
            cancelled = await (
                Interaction.filter(task_id=task.id, status=InteractionStatus.CANCELLED)
                .using_db(connection)
                .values_list("id", flat=True)
            )
            await _enqueue_decided(event, connection, [str(i) for i in cancelled])
        if (
            task is not None
            and task.status == TaskStatus.FAILED
            and event.payload.get("status") == TaskStatus.FAILED.value
        ):
            await _enqueue_failed(event, connection, task)


async def _recipients(workspace_id: str, connection: Connection) -> list[str]:
    """Members who act on the workspace's work (viewers only watch)."""
    rows = await (
        Membership.filter(workspace_id=workspace_id, role__in=[Role.OWNER, Role.MEMBER])
        .using_db(connection)
        .order_by("created_at")
        .values_list("user_id", flat=True)
    )
    return [str(r) for r in rows]


async def _enqueue_waiting(event: Event, connection: Connection, interaction_id: str) -> None:
    # A policy that names its approvers is news to them alone.
    policy = (event.payload.get("interaction") or {}).get("policy") or {}
    await _enqueue(
        event,
        connection,
        NotificationKind.WAITING,
        "waiting",
        interaction_id=interaction_id,
        only=list(policy.get("approvers") or []) or None,
    )


async def _enqueue_reminders(event: Event, connection: Connection) -> None:
    """Remind each person on a surface the card has not reached yet ("a second surface"),
    else where it did; risk and quiet hours count for a reminder as for any news."""
    interaction_id = event.payload["interactionId"]
    risk = await _card_risk(interaction_id, connection)
    sent = {
        (str(user_id), str(surface))
        for user_id, surface in await Notification.filter(
            interaction_id=interaction_id, kind=NotificationKind.WAITING
        )
        .using_db(connection)
        .values_list("user_id", "surface")
    }
    rows: list[Notification] = []
    for user_id in [str(u) for u in event.payload.get("to") or []]:
        settings = await settings_for(user_id, connection)
        due = due_at(settings, "waiting", risk, event.recorded_at)
        if due is None:
            continue
        reachable = await _reachable_surfaces(user_id, settings, connection)
        fresh = [s for s in reachable if (user_id, s) not in sent]
        for surface in fresh or reachable:
            row = _row(
                event,
                NotificationKind.REMINDER,
                user_id,
                surface,
                f"reminder:{interaction_id}:{user_id}",
                due,
            )
            row.interaction_id, row.task_id = interaction_id, event.task_id
            rows.append(row)
    await _insert_new(rows, connection)


async def _reachable_surfaces(
    user_id: str, settings: NotificationSettings, connection: Connection
) -> list[str]:
    """Surfaces that can put a card in front of the person: linked if they need an account,
    and sending cards (a surface that sends none by default, like the notebook whose inbox
    reads the log, counts only if the person turned it on)."""
    linked = await linked_surfaces(user_id, connection)
    return [
        surface.name
        for surface in surfaces().values()
        if surface.outbox
        and (not surface.needs_account or surface.name in linked)
        and (surface.defaults or enabled(settings, surface.name, "waiting"))
    ]


async def _enqueue_failed(event: Event, connection: Connection, task: Task) -> None:
    await _enqueue(event, connection, NotificationKind.FAILED, "failed", task_id=task.id)


async def _enqueue(
    event: Event,
    connection: Connection,
    kind: NotificationKind,
    preference: str,
    *,
    interaction_id: str | None = None,
    task_id: str | None = None,
    only: list[str] | None = None,
) -> None:
    subject = interaction_id or task_id
    risk = await _card_risk(interaction_id, connection) if interaction_id else None
    rows: list[Notification] = []
    for user_id in await _recipients(event.workspace_id, connection):
        if only is not None and user_id not in only:
            continue
        settings = await settings_for(user_id, connection)
        due = due_at(settings, preference, risk, event.recorded_at)
        if due is None:
            continue
        linked = await linked_surfaces(user_id, connection)
        for surface in surfaces().values():
            if not surface.outbox or not enabled(settings, surface.name, preference):
                continue
            if surface.needs_account and surface.name not in linked:
                continue
            # A card answered within moments (at the terminal, on a page already open) is
            # not news: it waits a little, and is skipped once decided.
            held = max(due, event.recorded_at + surface.card_after) if interaction_id else due
            rows.append(
                _row(event, kind, user_id, surface.name, f"{kind}:{subject}:{user_id}", held)
            )
            rows[-1].interaction_id, rows[-1].task_id = interaction_id, task_id or event.task_id
    await _insert_new(rows, connection)


async def _card_risk(interaction_id: str, connection: Connection) -> str | None:
    """The risk the card states (None: it states none); its projection is already applied."""
    payload = await (
        Interaction.filter(id=interaction_id)
        .using_db(connection)
        .first()
        .values_list("payload", flat=True)
    )
    return (payload or {}).get("risk") if isinstance(payload, dict) else None


async def _enqueue_decided(
    event: Event, connection: Connection, interaction_ids: list[str]
) -> None:
    if not interaction_ids:
        return
    sent = await (
        Notification.filter(
            interaction_id__in=interaction_ids,
            kind__in=[NotificationKind.WAITING, NotificationKind.REMINDER],
        )
        .using_db(connection)
        .values_list("interaction_id", "user_id", "surface")
    )
    rows = []
    for interaction_id, user_id, surface in sent:
        # Updates are not new news: quiet hours do not hold them back.
        row = _row(
            event,
            NotificationKind.DECIDED,
            str(user_id),
            str(surface),
            f"decided:{interaction_id}:{user_id}",
            event.recorded_at,
        )
        row.interaction_id, row.task_id = str(interaction_id), event.task_id
        rows.append(row)
    await _insert_new(rows, connection)


async def _enqueue_updated(event: Event, connection: Connection) -> None:
    """A vote changes the count every copy of the card shows: update each copy."""
    interaction_id = event.payload["interactionId"]
    sent = await (
        Notification.filter(
            interaction_id=interaction_id,
            kind__in=[NotificationKind.WAITING, NotificationKind.REMINDER],
        )
        .using_db(connection)
        .values_list("user_id", "surface")
    )
    rows = []
    for user_id, surface in sent:
        row = _row(
            event,
            NotificationKind.UPDATED,
            str(user_id),
            str(surface),
            f"updated:{interaction_id}:{event.sequence}:{user_id}",
            event.recorded_at,
        )
        row.interaction_id, row.task_id = interaction_id, event.task_id
        rows.append(row)
    await _insert_new(rows, connection)


def _row(
    event: Event,
    kind: NotificationKind,
    user_id: str,
    surface: str,
    key: str,
    due: datetime,
) -> Notification:
    return Notification(
        id=new_id("notification"),
        workspace_id=event.workspace_id,
        user_id=user_id,
        surface=surface,
        kind=kind,
        event_sequence=event.sequence,
        dedupe_key=f"{key}:{surface}",
        status=NotificationStatus.PENDING,
        attempts=0,
        next_attempt_at=due,
        last_error="",
        created_at=event.recorded_at,
    )


async def _insert_new(rows: list[Notification], connection: Connection) -> None:
    if not rows:
        return
    keys = [row.dedupe_key for row in rows]
    taken = {
        str(key)
        for key in await Notification.filter(dedupe_key__in=keys)
        .using_db(connection)
        .values_list("dedupe_key", flat=True)
    }
    fresh = {row.dedupe_key: row for row in rows if row.dedupe_key not in taken}
    if fresh:
        await Notification.bulk_create(list(fresh.values()), using_db=connection)


__all__ = ["enqueue_for"]
