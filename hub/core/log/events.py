"""The append-only, sequenced event log: the one way state changes in the hub.

``append_event`` writes an event and applies its projection in one transaction, then
publishes it on the bus after commit. Appends to one workspace that arrive while a
transaction is running share the next one (``hub.core.log.group_commit``): one commit, one
disk flush, for all of them; each caller is answered only after that commit. Two
guarantees hold for each workspace:

* **Gap-free, commit-ordered sequences.** The transaction's first statement bumps the
  workspace's ``last_sequence`` by the batch's size. On PostgreSQL that row lock makes
  every other append to the same workspace (from another process) wait until this one
  commits or rolls back, so sequence N+1 can never become visible before N (a global
  serial column can: readers would skip N for good). SQLite serialises writers anyway;
  bumping first also means a second SQLite process takes the write lock at once instead
  of failing to upgrade a read lock. An append the projection refuses rolls the batch
  back, and the others are written again without it: no gap, and no neighbour refused.
* **Idempotency by envelope id.** A repeated id returns the first event, marked duplicate,
  and changes nothing, even when 50 copies arrive at once: the duplicate check runs under
  the same lock, copies within one batch are matched to the first, and an append refused
  for any reason is looked up in the log before its refusal is given: a copy another hub
  process stored meanwhile makes it a duplicate, whatever refused it.

What an event changes beside the log (the work projection, with the agents' and members'
rows and the notifications it causes) is applied through a ``Projection`` the log is given
once (``use_projection``, called by ``hub.core`` as it loads): every service appends here,
so the log sits below them all and cannot import what their events change.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from tortoise.exceptions import IntegrityError

from hub.core.errors import InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.log import bulk_inserts, relay
from hub.core.log.bus import DEFAULT_BUS, EventBus
from hub.core.log.envelopes import to_published
from hub.core.log.fresh_rows import fresh
from hub.core.log.group_commit import GroupCommit, Request
from hub.core.store.models import Event, Workspace
from hub.core.store.storage_faults import storage_fault
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)

MAX_ENVELOPE_ID_LENGTH = 100
# Actors are "user:<id>", "agent:<id>" or "system"; a person's appends are served first.
PERSON_ACTOR_PREFIX = "user:"
# An append's idempotency key: its actor and its envelope id.
_Key = tuple[str, str]
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


class Projection(Protocol):
    """What appending an event changes beside the log, inside the append's transaction.

    ``apply`` raises a ``HubError`` to refuse the event; ``replaying`` is set while
    ``rebuild_projections`` replays the log (entity rows and notifications stay as they are).
    ``clear`` drops a workspace's projected rows before a replay.
    """

    async def apply(self, event: Event, connection: Any, *, replaying: bool = False) -> None: ...

    async def clear(self, workspace_id: str, connection: Any) -> None: ...


_projection: Projection | None = None


def use_projection(projection: Projection) -> None:
    """Apply every appended event to ``projection`` from now on."""
    global _projection
    _projection = projection


def _projection_in_use() -> Projection:
    if _projection is None:
        raise RuntimeError("No projection is in use: import hub.core, which sets it.")
    return _projection


@dataclass(slots=True)  # not frozen: its __init__ would go through object.__setattr__
class _Append:
    """One requested append, as its caller described it; built into an ``Event`` per try."""

    workspace_id: str
    type: str
    payload: dict[str, Any]
    actor: str
    envelope_id: str
    occurred_at: datetime | None
    conversation_id: str | None
    task_id: str | None
    correlation_id: str | None
    bus: EventBus

    @property
    def key(self) -> _Key:
        """Its idempotency key: envelope ids are the actor's own (see ``Event.id``)."""
        return self.actor, self.envelope_id

    def event(self, sequence: int, now: datetime) -> Event:
        return fresh(
            Event,
            workspace_id=self.workspace_id,
            sequence=sequence,
            id=self.envelope_id,
            type=self.type,
            actor=self.actor,
            conversation_id=self.conversation_id,
            task_id=self.task_id,
            correlation_id=self.correlation_id,
            payload=self.payload,
            occurred_at=self.occurred_at or now,
            recorded_at=now,
        )


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

    Returns once the event is committed (or found to be a duplicate). Raises the
    projection's ``HubError`` (e.g. ``IllegalTransition``) when the event is not acceptable
    in the current state; nothing is written then.
    """
    result: AppendResult = await queue_append(
        workspace_id,
        type,
        payload,
        actor=actor,
        envelope_id=envelope_id,
        occurred_at=occurred_at,
        conversation_id=conversation_id,
        task_id=task_id,
        correlation_id=correlation_id,
        bus=bus,
    )
    return result


def queue_append(
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
) -> asyncio.Future[AppendResult]:
    """``append_event`` in two steps: queued now, behind every append queued before it, and
    settled by the returned future. An agent's session queues its frames in the order they
    came and awaits the answers later, so it can read the next frame meanwhile."""
    envelope_id = envelope_id or new_id("event")
    if not envelope_id or len(envelope_id) > MAX_ENVELOPE_ID_LENGTH:
        raise InvalidInput(f"An envelope id must be 1 to {MAX_ENVELOPE_ID_LENGTH} characters.")
    if occurred_at is not None and occurred_at.tzinfo is None:
        occurred_at = occurred_at.replace(tzinfo=UTC)  # the log's clock is UTC throughout
    append = _Append(
        workspace_id,
        type,
        payload,
        actor,
        envelope_id,
        occurred_at,
        conversation_id,
        task_id,
        correlation_id,
        bus or DEFAULT_BUS,
    )
    # A person's write goes before the agents' queued bulk; each actor takes its turn.
    return LOG_WRITES.enqueue(
        workspace_id, append, source=actor, urgent=actor.startswith(PERSON_ACTOR_PREFIX)
    )


async def _write_batch(workspace_id: Hashable, batch: list[Request[_Append]]) -> None:
    """Commit a batch of appends to one workspace's log in one transaction.

    An append its projection refuses, or one the log already holds, is taken out and the
    rest are tried again: a refusal must not cost its neighbours, and the sequences stay
    gap-free. Each try takes out at least one append (but one, which stops sharing inserts
    to find whose failed), so this ends. Answers are given only once the batch is
    committed: a refusal may rest on the effects of appends before it in the batch (the
    second answer to a card meets the first), and its caller reads the hub's state next.
    A failure of the database itself fails every append still pending, and every refusal:
    what they met was never stored.
    """
    pending, together = batch, True
    held: list[tuple[Request[_Append], AppendResult | Exception]] = []
    while pending:
        try:
            results = await _commit(
                str(workspace_id), [request.work for request in pending], together=together
            )
        except _Retry as retry:
            if not retry.answers:  # a shared insert failed: find whose, one by one
                together = False
                continue
            for key, answer in list(retry.answers.items()):
                if isinstance(answer, Exception):
                    # Refused, or its id taken: if another hub process stored a copy of
                    # this envelope while this one waited for the workspace's lock, what
                    # refused it was that copy (its id, or its effects: "already decided",
                    # a task that has moved on). Its answer is the copy's.
                    stored = await _find(str(workspace_id), key)
                    if stored is not None:
                        retry.answers[key] = AppendResult(stored, duplicate=True)
            held += [(r, retry.answers[r.work.key]) for r in pending if r.work.key in retry.answers]
            pending = [r for r in pending if r.work.key not in retry.answers]
            continue
        except Exception as error:  # the database failed: nothing was stored
            for request in pending:
                request.fail(error)
            for request, answer in held:
                _answer(request, answer if isinstance(answer, AppendResult) else error)
            return
        for request, result in zip(pending, results, strict=True):
            request.settle(result)
        for request, result in zip(pending, results, strict=True):
            if not result.duplicate:
                request.work.bus.publish(to_published(result.event))
        break
    for request, answer in held:
        _answer(request, answer)


def _answer(request: Request[_Append], answer: AppendResult | Exception) -> None:
    if isinstance(answer, AppendResult):
        request.settle(answer)
    else:
        request.fail(answer)


async def _commit(
    workspace_id: str, appends: list[_Append], *, together: bool
) -> list[AppendResult]:
    """One try at a batch: every append stored, or ``_Retry`` naming those to take out.

    ``together`` shares the batch's writes (``hub.core.log.bulk_inserts``): its events and
    messages are inserted with one statement per table at the end. Otherwise each row is
    inserted with its event, so a unique-key failure names its append.
    """
    unique = list(dict.fromkeys(append.key for append in appends))
    now = utcnow()
    async with in_transaction() as connection:
        last, logged = await _take_sequences(connection, workspace_id, unique)
        if logged:  # resent envelopes (an agent that reconnected) are in the log already
            ids = {envelope_id for _, envelope_id in unique}
            stored = await Event.filter(workspace_id=workspace_id, id__in=ids).using_db(connection)
            raise _Retry(
                {
                    (event.actor, event.id): AppendResult(event, duplicate=True)
                    for event in stored
                    if (event.actor, event.id) in unique
                }
            )
        sequence = last - len(unique)
        with bulk_inserts.sharing() if together else contextlib.nullcontext() as writes:
            results = await _apply_all(appends, sequence, now, connection)
            if writes is not None:
                try:
                    await writes.flush(connection)
                except IntegrityError as error:  # a taken id: find out whose, one by one
                    raise _Retry({}) from error
    return results


async def _apply_all(
    appends: list[_Append], sequence: int, now: datetime, connection: Any
) -> list[AppendResult]:
    made: dict[_Key, Event] = {}
    results = []
    for append in appends:
        first = made.get(append.key)
        if first is not None:  # a copy sent again before the first was answered
            results.append(AppendResult(first, duplicate=True))
            continue
        sequence += 1
        event = append.event(sequence, now)
        try:
            await _projection_in_use().apply(event, connection)
            await bulk_inserts.insert(event, connection)
        except Exception as error:
            if storage_fault(error) is not None:
                raise  # the database failed, not this append: the batch fails
            raise _Retry({append.key: error}) from error
        made[append.key] = event
        results.append(AppendResult(event, duplicate=False))
    return results


class _Retry(Exception):
    def __init__(self, answers: dict[_Key, AppendResult | Exception]) -> None:
        self.answers = answers


# The transaction's first statement, one round trip: it takes the batch's sequences, counts
# the batch's envelopes the log holds already, and on PostgreSQL queues the notification
# other hub processes receive when this transaction commits (see hub.core.log.relay):
# "<process> <workspace> <first> <last>".
#
# The count reads the log under the workspace's row lock, so within a process nothing can
# store a copy meanwhile. On PostgreSQL the statement's snapshot is older than that lock: a
# copy another hub process committed while this one waited for the lock is not counted.
# The copy's effects are then in place, so the projection may refuse the resend against
# them (or the unique index refuses its insert); either way ``_write_batch`` looks the
# refused envelope up, now outside that snapshot, and answers it as the duplicate it is.
# The look-up costs a query only on a refusal, never on the common path.
_TAKE_SEQUENCES_POSTGRES = (
    "WITH bumped AS (UPDATE workspace SET last_sequence = last_sequence + $4 WHERE id = $1 "
    "RETURNING last_sequence) "
    "SELECT last_sequence, pg_notify($2, $3 || ' ' || (last_sequence - $4 + 1) || ' ' || "
    "last_sequence), {logged} AS logged FROM bumped"
)
# A batch's ids are looked up id by id through the (workspace, id) index. Asked for
# "workspace_id = $1 AND id IN (...)", PostgreSQL without fresh statistics (a young or
# fast-growing log, before autovacuum has analysed it) reads every event of the workspace
# instead: 10 ms for a batch of 200 at 30,000 events, against 0.3 ms this way (and see the
# plan cache in hub.core.store.database). A lone id, the common case at a light load, is asked
# for plainly: planning the form for many took 0.12 ms, the plain one 0.02 ms.
_LOGGED_ONE_POSTGRES = (
    "(SELECT count(*) FROM event e WHERE e.workspace_id = $1 AND e.actor = $5 AND e.id = $6)"
)
_LOGGED_MANY_POSTGRES = (
    "(SELECT count(*) FROM unnest($5::varchar[], $6::varchar[]) AS u(actor, id), LATERAL "
    "(SELECT 1 FROM event e WHERE e.workspace_id = $1 AND e.actor = u.actor AND e.id = u.id "
    "LIMIT 1) AS hit)"
)
_TAKE_SEQUENCES_ONE_POSTGRES = _TAKE_SEQUENCES_POSTGRES.format(logged=_LOGGED_ONE_POSTGRES)
_TAKE_SEQUENCES_MANY_POSTGRES = _TAKE_SEQUENCES_POSTGRES.format(logged=_LOGGED_MANY_POSTGRES)
# At most a batch's ids (GroupCommit.max_batch), far below SQLite's 32,766 parameters.
# Each key is looked up in the (workspace, actor, id) index: asked for "workspace_id = ? AND
# (actor, id) IN (VALUES ...)", SQLite read every event of the workspace instead, 25 ms
# before every batch at 200,000 events (benchmarks/RESULTS.md). CROSS JOIN keeps the keys
# first.
_TAKE_SEQUENCES_SQLITE = (
    "UPDATE workspace SET last_sequence = last_sequence + ? WHERE id = ? RETURNING "
    "last_sequence, (SELECT count(*) FROM (VALUES {}) AS k CROSS JOIN event AS e"
    " ON e.workspace_id = ? AND e.actor = k.column1 AND e.id = k.column2) AS logged"
)


async def _take_sequences(connection: Any, workspace_id: str, keys: list[_Key]) -> tuple[int, int]:
    """Bump the workspace's counter by one per envelope, as the transaction's first
    statement (see the module doc); returns the last sequence taken, and how many of
    ``keys`` the log holds already."""
    count = len(keys)
    if connection.capabilities.dialect == "postgres":
        notice = f"{relay.PROCESS_ID} {workspace_id}"
        actors, ids = [actor for actor, _ in keys], [envelope_id for _, envelope_id in keys]
        arguments: list[str] | list[list[str]] = [actors, ids]
        query = _TAKE_SEQUENCES_MANY_POSTGRES
        if count == 1:
            query, arguments = _TAKE_SEQUENCES_ONE_POSTGRES, [actors[0], ids[0]]
        rows = await connection.execute_query_dict(
            query, [workspace_id, relay.CHANNEL, notice, count, *arguments]
        )
    else:
        query = _TAKE_SEQUENCES_SQLITE.format(", ".join(["(?, ?)"] * count))
        rows = await connection.execute_query_dict(
            query, [count, workspace_id, *(part for key in keys for part in key), workspace_id]
        )
    if not rows:
        raise NotFound(f"Workspace {workspace_id} does not exist.")
    return int(rows[0]["last_sequence"]), int(rows[0]["logged"])


async def _find(workspace_id: str, key: _Key) -> Event | None:
    actor, envelope_id = key
    return await Event.filter(workspace_id=workspace_id, actor=actor, id=envelope_id).first()


LOG_WRITES: GroupCommit[_Append] = GroupCommit(_write_batch)
"""Every append goes through here; its counters tell how much commits are shared."""


# At most this many rows are read for a batch of agents' replays together; past it, each
# agent reads its own page (a batch behind by days must not read everyone's history).
SHARED_REPLAY_ROWS = 1000


async def _read_downlinks(
    workspace_id: Hashable, batch: list[Request[tuple[str, int, int]]]
) -> None:
    """The downlink events after each (agent, sequence) of ``batch``, at most ``limit``
    each: one query for the batch when it finds few enough, which a fleet reconnecting at
    its positions does (little or nothing is waiting); else one query each."""
    floor = min(sequence for _agent, sequence, _limit in (r.work for r in batch))
    agents = {agent for agent, _sequence, _limit in (r.work for r in batch)}
    # No order: with one, the database would read every row of the batch to sort them;
    # without, it stops at the limit, and a full answer is sorted here.
    rows = await Event.filter(
        workspace_id=workspace_id, recipient_agent_id__in=agents, sequence__gt=floor
    ).limit(SHARED_REPLAY_ROWS + 1)
    shared = len(rows) <= SHARED_REPLAY_ROWS
    rows.sort(key=lambda event: event.sequence)
    for request in batch:
        agent, sequence, limit = request.work
        if shared:
            mine = [e for e in rows if e.recipient_agent_id == agent and e.sequence > sequence]
            request.settle(mine[:limit])
        else:
            request.settle(
                await events_after(
                    str(workspace_id), sequence, limit=limit, recipient_agent_id=agent
                )
            )


_DOWNLINK_READS: GroupCommit[tuple[str, int, int]] = GroupCommit(_read_downlinks, max_batch=500)


async def downlink_after(
    workspace_id: str, agent_id: str, sequence: int, *, limit: int = 1000
) -> list[Event]:
    """``events_after`` for one agent's downlink, read together with the other agents'
    replays that start at the same moment (a storm of hellos): the same page, in fewer
    queries."""
    events: list[Event] = await _DOWNLINK_READS.submit(workspace_id, (agent_id, sequence, limit))
    return events


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


async def _read_workspaces(_key: Hashable, batch: list[Request[str]]) -> None:
    ids = {request.work for request in batch}
    rows = {row.id: row for row in await Workspace.filter(id__in=ids)}
    for request in batch:
        row = rows.get(request.work)
        if row is None:
            request.fail(NotFound(f"Workspace {request.work} does not exist."))
        else:
            request.settle(copy.copy(row))  # each caller its own: none sees another's edits


# Each hello reads its workspace's row twice (where the log ends, its epoch): a storm of two
# thousand reconnecting agents would send four thousand identical reads.
_WORKSPACE_READS: GroupCommit[str] = GroupCommit(_read_workspaces, max_batch=500)


async def current_workspace(workspace_id: str) -> Workspace:
    """The workspace's row as it is now: read after this call began, in one query with the
    calls that wait beside it. ``NotFound`` if there is no such workspace."""
    workspace: Workspace = await _WORKSPACE_READS.submit(None, workspace_id)
    return workspace


async def last_sequence(workspace_id: str) -> int:
    return int((await current_workspace(workspace_id)).last_sequence)


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
            await _projection_in_use().clear(workspace_id, connection)
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
                    await _projection_in_use().apply(event, connection, replaying=True)
                    replayed += 1
                after = int(page[-1].sequence)
    return replayed


__all__ = [
    "LOG_WRITES",
    "AppendResult",
    "Projection",
    "append_event",
    "current_workspace",
    "downlink_after",
    "events_after",
    "last_sequence",
    "queue_append",
    "rebuild_projections",
    "use_projection",
]
