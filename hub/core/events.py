"""The append-only, sequenced event log: the one way state changes in the hub.

``append_event`` writes an event and applies its projection in one transaction, then
publishes it on the bus after commit. Two guarantees hold for each workspace:

* **Gap-free, commit-ordered sequences.** The transaction's first statement bumps the
  workspace's ``last_sequence``. On PostgreSQL that row lock makes every other append to
  the same workspace wait until this one commits or rolls back, so sequence N+1 can never
  become visible before N (a global serial column can: readers would skip N for good).
  SQLite serialises writers anyway; bumping first also means a second SQLite process
  takes the write lock at once instead of failing to upgrade a read lock.
* **Idempotency by envelope id.** A repeated id returns the first event, marked duplicate,
  and changes nothing, even when 50 copies arrive at once: the duplicate check runs under
  the same lock, and a unique index catches anything that slips past.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from hub.core import projection, relay
from hub.core.bus import DEFAULT_BUS, EventBus, PublishedEvent
from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.models import Event, Workspace
from hub.protocol.base import wire_time

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = "0.1"
MAX_ENVELOPE_ID_LENGTH = 100
# Sequences are 64-bit signed integers in both databases: a cursor past this cannot be
# stored or compared, so it is refused as input instead of failing in the driver.
MAX_SEQUENCE = 2**63 - 1


@dataclass(frozen=True, slots=True)
class AppendResult:
    event: Event
    duplicate: bool

    @property
    def sequence(self) -> int:
        return int(self.event.sequence)


def utcnow() -> datetime:
    return datetime.now(UTC)


async def append_event(
    workspace_id: str,
    type: str,
    payload: dict[str, Any],
    *,
    actor: str,
    envelope_id: str | None = None,
    occurred_at: datetime | None = None,
    conversation_id: str | None = None,
    task_id: str | None = None,
    correlation_id: str | None = None,
    bus: EventBus | None = None,
) -> AppendResult:
    """Append one event and apply it to the projections, atomically.

    Raises the projection's ``HubError`` (e.g. ``IllegalTransition``) when the event is not
    acceptable in the current state; nothing is written then.
    """
    envelope_id = envelope_id or new_id("event")
    if not envelope_id or len(envelope_id) > MAX_ENVELOPE_ID_LENGTH:
        raise InvalidInput(f"An envelope id must be 1 to {MAX_ENVELOPE_ID_LENGTH} characters.")
    # No look for a duplicate before the transaction: it cost every append a round trip,
    # and the look under the lock below is the one that decides.
    now = utcnow()
    try:
        async with in_transaction() as connection:
            sequence = await _take_sequence(connection, workspace_id)
            existing = await _find(workspace_id, envelope_id, connection)
            if existing is not None:
                # Rolling back returns the sequence we just took: no gap.
                raise _Duplicate(existing)
            event = Event(
                workspace_id=workspace_id,
                sequence=sequence,
                id=envelope_id,
                type=type,
                actor=actor,
                conversation_id=conversation_id,
                task_id=task_id,
                correlation_id=correlation_id,
                payload=payload,
                occurred_at=occurred_at or now,
                recorded_at=now,
            )
            await projection.apply(event, connection)
            await event.save(using_db=connection)
    except _Duplicate as duplicate:
        return AppendResult(duplicate.event, duplicate=True)
    except IntegrityError:
        # A concurrent copy won the race between our check and our insert.
        existing = await _find(workspace_id, envelope_id)
        if existing is None:
            raise
        return AppendResult(existing, duplicate=True)
    (bus or DEFAULT_BUS).publish(to_published(event))
    return AppendResult(event, duplicate=False)


# One round trip takes the next sequence (and, on PostgreSQL, queues the notification that
# other hub processes receive when this transaction commits: see hub.core.relay).
_TAKE_SEQUENCE_POSTGRES = (
    "WITH bumped AS (UPDATE workspace SET last_sequence = last_sequence + 1 WHERE id = $1 "
    "RETURNING last_sequence) "
    "SELECT last_sequence, pg_notify($2, $3 || ' ' || last_sequence) FROM bumped"
)
_TAKE_SEQUENCE_SQLITE = (
    "UPDATE workspace SET last_sequence = last_sequence + 1 WHERE id = ? RETURNING last_sequence"
)


async def _take_sequence(connection: Any, workspace_id: str) -> int:
    """Bump the workspace's counter as the transaction's first statement; see the module doc."""
    if connection.capabilities.dialect == "postgres":
        rows = await connection.execute_query_dict(
            _TAKE_SEQUENCE_POSTGRES,
            [workspace_id, relay.CHANNEL, f"{relay.PROCESS_ID} {workspace_id}"],
        )
    else:
        rows = await connection.execute_query_dict(_TAKE_SEQUENCE_SQLITE, [workspace_id])
    if not rows:
        raise NotFound(f"Workspace {workspace_id} does not exist.")
    return int(rows[0]["last_sequence"])


class _Duplicate(Exception):
    def __init__(self, event: Event) -> None:
        self.event = event


async def _find(workspace_id: str, envelope_id: str, connection: Any = None) -> Event | None:
    query = Event.filter(workspace_id=workspace_id, id=envelope_id)
    if connection is not None:
        query = query.using_db(connection)
    return await query.first()


async def events_after(
    workspace_id: str,
    sequence: int,
    *,
    limit: int = 1000,
    recipient_agent_id: str | None = None,
) -> list[Event]:
    """The workspace's events after ``sequence``, in order (a page of at most ``limit``).

    With ``recipient_agent_id``, only the downlink events addressed to that agent.
    """
    query = Event.filter(workspace_id=workspace_id, sequence__gt=sequence)
    if recipient_agent_id is not None:
        query = query.filter(recipient_agent_id=recipient_agent_id)
    return await query.order_by("sequence").limit(limit)


async def last_sequence(workspace_id: str) -> int:
    value = await Workspace.filter(id=workspace_id).first().values_list("last_sequence", flat=True)
    if value is None:
        raise NotFound(f"Workspace {workspace_id} does not exist.")
    return int(value)  # type: ignore[call-overload,no-any-return]


def to_envelope(event: Event) -> dict[str, Any]:
    """The LAP/0.1 envelope (spec §10) of a stored event."""
    envelope: dict[str, Any] = {
        "id": event.id,
        "type": event.type,
        "version": PROTOCOL_VERSION,
        "occurredAt": wire_time(event.occurred_at),
        "recordedAt": wire_time(event.recorded_at),
        "workspaceId": event.workspace_id,
        "sequence": int(event.sequence),
        "actor": event.actor,
        "payload": event.payload,
    }
    for key, value in (
        ("conversationId", event.conversation_id),
        ("taskId", event.task_id),
        ("correlationId", event.correlation_id),
    ):
        if value is not None:
            envelope[key] = value
    return envelope


def to_published(event: Event) -> PublishedEvent:
    return PublishedEvent(
        workspace_id=event.workspace_id,
        sequence=int(event.sequence),
        type=event.type,
        recipient_agent_id=event.recipient_agent_id,
        envelope=to_envelope(event),
    )


async def start_new_epochs() -> int:
    """Give every workspace's log a new epoch; returns how many.

    Run after restoring a backup: the restored log's sequences restart below what clients
    hold, and new events will reuse numbers those clients have already seen. A client that
    comes back with the old epoch is told to resync (``system.resync_required``) rather
    than skipping them.
    """
    count = 0
    for workspace_id in await Workspace.all().values_list("id", flat=True):
        await Workspace.filter(id=workspace_id).update(epoch=new_id("event"))
        count += 1
    return count


async def rebuild_projections(workspace_ids: Sequence[str] | None = None) -> int:
    """Drop the projection rows and replay the log into them; returns events replayed.

    Proves that the log is the truth: afterwards the projections equal what they were.
    """
    if workspace_ids is None:
        workspace_ids = [str(w) for w in await Workspace.all().values_list("id", flat=True)]
    replayed = 0
    for workspace_id in workspace_ids:
        async with in_transaction() as connection:
            await projection.clear(workspace_id, connection)
            after = 0
            while True:
                page = (
                    await Event.filter(workspace_id=workspace_id, sequence__gt=after)
                    .using_db(connection)
                    .order_by("sequence")
                    .limit(500)
                )
                if not page:
                    break
                for event in page:
                    await projection.apply(event, connection, replaying=True)
                    replayed += 1
                after = int(page[-1].sequence)
    return replayed


__all__ = [
    "AppendResult",
    "append_event",
    "events_after",
    "last_sequence",
    "rebuild_projections",
    "to_envelope",
    "to_published",
    "utcnow",
]
