"""The inbox's counts, kept by the projection instead of counted by each page.

Every page shows how many cards wait for the person, and the inbox how many tasks need
attention or finished lately. Counting those rows on every page costs what the workspace
holds, not what the page shows; so each event that changes one of them changes its
``InboxCount`` rows in the same transaction (``collecting``, around the projection's
handlers), and a page reads a handful of rows. Each figure is kept over every agent
(``agent_id`` "") and per agent, for an inbox narrowed to one:

* ``open``: the pending cards, whoever they wait for (the inbox of nobody in particular);
* ``anyone``: the pending cards whose policy names no approvers: they wait for everyone who
  may answer (owners and members) but those who voted on them already: ``voted`` per
  person;
* ``named`` per person: the pending cards whose policy names them and which they have not
  voted on;
* ``failed`` and ``done`` per day (UTC): the tasks that failed, and the top-level tasks that
  succeeded or were cancelled, that day ("lately" is a number of whole days, so its count
  is a sum of a few rows);
* ``running`` per agent: running tasks; those of an agent that is offline need attention.

So a card waits for a person who may answer when it names nobody (``anyone``, less what
they ``voted``), or names them (``named``); for a viewer nothing waits. A role changed
later changes nothing stored: the role is read with the counts. A card is waiting while it
is pending: the policy clock expires a card at its expiry (``hub.core.approvals.policy_clock``).

Handlers run again only for a new event (a resent envelope is answered from the log
without being applied), and a refused event rolls its transaction back with its counts.
``recount`` counts the same figures from the rows, for the migration that fills them in
and for the tests that hold the two side by side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from hub.core.log.handlers import Connection
from hub.core.store.models import AgentStatus, InboxCount, Interaction, InteractionStatus, Task
from hub.core.store.sqlite_reader import reading_connection
from hub.core.task_states import TaskStatus

OPEN, ANYONE, VOTED, NAMED = "open", "anyone", "voted", "named"
FAILED, DONE, RUNNING = "failed", "done", "running"
DONE_STATUSES = frozenset({TaskStatus.SUCCEEDED.value, TaskStatus.CANCELLED.value})

# (figure, person, agent_id, day)
_Key = tuple[str, str, str, str]


class Changes:
    """The figures one event changes, summed, written with one statement."""

    def __init__(self) -> None:
        self.deltas: dict[_Key, int] = defaultdict(int)

    def add(
        self, figure: str, delta: int, *, agent_id: str | None, person: str = "", day: str = ""
    ) -> None:
        self.deltas[figure, person, "", day] += delta
        if agent_id:
            self.deltas[figure, person, agent_id, day] += delta

    # --- cards ------------------------------------------------------------------------

    def card_opened(self, card: Interaction) -> None:
        self.add(OPEN, 1, agent_id=card.agent_id)
        if card.waiting_on is None:
            self.add(ANYONE, 1, agent_id=card.agent_id)
            for person in people(card.voted_by):
                self.add(VOTED, 1, agent_id=card.agent_id, person=person)
        else:
            for person in people(card.waiting_on):
                self.add(NAMED, 1, agent_id=card.agent_id, person=person)

    def card_closed(self, card: Interaction) -> None:
        """``card`` (as it was while pending) stopped waiting."""
        self.add(OPEN, -1, agent_id=card.agent_id)
        if card.waiting_on is None:
            self.add(ANYONE, -1, agent_id=card.agent_id)
            for person in people(card.voted_by):
                self.add(VOTED, -1, agent_id=card.agent_id, person=person)
        else:
            for person in people(card.waiting_on):
                self.add(NAMED, -1, agent_id=card.agent_id, person=person)

    def card_voted(self, card: Interaction, voter: str) -> None:
        """``voter`` (a user id) voted on the pending ``card``: it waits for them no more.
        Updates the card's ``waiting_on`` and ``voted_by``; the caller saves it."""
        if voter in people(card.voted_by):
            return
        card.voted_by = joined([*people(card.voted_by), voter])
        if card.waiting_on is None:
            self.add(VOTED, 1, agent_id=card.agent_id, person=voter)
        elif voter in people(card.waiting_on):
            card.waiting_on = joined([p for p in people(card.waiting_on) if p != voter])
            self.add(NAMED, -1, agent_id=card.agent_id, person=voter)

    def card_named(self, card: Interaction, added: list[str]) -> None:
        """The pending ``card``'s policy names ``added`` too (an escalation). A card that
        names nobody waits for everyone already."""
        if card.waiting_on is None:
            return
        waiting, voted = people(card.waiting_on), people(card.voted_by)
        new = [p for p in dict.fromkeys(added) if p not in waiting and p not in voted]
        card.waiting_on = joined([*waiting, *new])
        for person in new:
            self.add(NAMED, 1, agent_id=card.agent_id, person=person)

    # --- tasks ------------------------------------------------------------------------

    def task_moved(self, task: Task, before: str | None, at: datetime) -> None:
        """``task`` went from ``before`` (None: it was just made) to its status at ``at``."""
        after = task.status
        if after == before:
            return
        if before == TaskStatus.RUNNING:
            self.add(RUNNING, -1, agent_id=task.target_agent_id)
        if after == TaskStatus.RUNNING:
            self.add(RUNNING, 1, agent_id=task.target_agent_id)
        if after == TaskStatus.FAILED:
            self.add(FAILED, 1, agent_id=task.target_agent_id, day=day_of(at))
        elif after in DONE_STATUSES and task.parent_id is None:
            self.add(DONE, 1, agent_id=task.target_agent_id, day=day_of(at))

    async def write(self, workspace_id: str, connection: Connection) -> None:
        changed = [(key, delta) for key, delta in self.deltas.items() if delta]
        self.deltas.clear()
        if not changed:
            return
        dialect = connection.capabilities.dialect
        values, arguments = [], []
        for n, ((figure, person, agent_id, day), delta) in enumerate(changed):
            if dialect == "postgres":
                values.append("(" + ", ".join(f"${6 * n + i}" for i in range(1, 7)) + ")")
            else:
                values.append("(?, ?, ?, ?, ?, ?)")
            arguments += [workspace_id, figure, person, agent_id, day, delta]
        await connection.execute_query(_ADD.format(values=", ".join(values)), arguments)


_ADD = (
    "INSERT INTO inbox_count (workspace_id, figure, person, agent_id, day, n) VALUES {values} "
    "ON CONFLICT (workspace_id, figure, person, agent_id, day) "
    "DO UPDATE SET n = inbox_count.n + excluded.n"
)

_changes: ContextVar[Changes | None] = ContextVar("inbox_changes", default=None)


@contextmanager
def collecting() -> Iterator[Changes]:
    """The changes the handlers run inside the block make (``changes()``), to be written
    once they all ran."""
    collected = Changes()
    token = _changes.set(collected)
    try:
        yield collected
    finally:
        _changes.reset(token)


def changes() -> Changes:
    collected = _changes.get()
    if collected is None:
        raise RuntimeError("Inbox counts change only while the projection applies an event.")
    return collected


# --- what a card waits for ------------------------------------------------------------


def people(text: str | None) -> list[str]:
    return (text or "").split()


def joined(user_ids: list[str]) -> str:
    """Ids as ``waiting_on`` and ``voted_by`` hold them: each between spaces, so that
    ``contains(" <id> ")`` finds one whole."""
    return f" {' '.join(user_ids)} " if user_ids else ""


def waiting_on(policy: dict[str, Any] | None) -> str | None:
    """``Interaction.waiting_on`` of a new card with ``policy``: the approvers it names."""
    approvers = [str(a) for a in (policy or {}).get("approvers") or []]
    return joined(approvers) if approvers else None


def voter_of(actor: str) -> str:
    """The user id of a vote's actor ("user:<id>")."""
    return actor.partition(":")[2] or actor


def day_of(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def first_day(now: datetime, days: int) -> date:
    """The first of the ``days`` whole days (UTC) that end with ``now``'s."""
    return now.astimezone(UTC).date() - timedelta(days=days - 1)


# --- reading them ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reader:
    """Whose inbox is read: ``person`` a user id (None: nobody's, every open card), and
    whether they may answer cards at all (owners and members)."""

    person: str | None = None
    may_answer: bool = True


NOBODY = Reader()


async def read(
    workspace_id: str, reader: Reader, *, agent_id: str | None, since: date
) -> dict[str, int]:
    """The three sections' counts, over every agent or ``agent_id``'s, of the days from
    ``since`` on."""
    connection = reading_connection()
    marks = _marks(connection)(4)
    rows = await connection.execute_query_dict(
        f"SELECT figure, person, day, n FROM inbox_count WHERE workspace_id = {marks[0]} "
        f"AND agent_id = {marks[1]} AND ("
        "(figure IN ('open', 'anyone') AND person = '' AND day = '') "
        f"OR (figure IN ('voted', 'named') AND person = {marks[2]} AND day = '') "
        f"OR (figure IN ('failed', 'done') AND person = '' AND day >= {marks[3]}))",
        [workspace_id, agent_id or "", reader.person or "", since.isoformat()],
    )
    sums: dict[str, int] = defaultdict(int)
    for row in rows:
        sums[str(row["figure"])] += int(row["n"])
    return {
        "waitingForMe": _waiting(sums, reader),
        "needsAttention": sums[FAILED] + await _running_offline(workspace_id, agent_id),
        "recentlyDone": sums[DONE],
    }


async def waiting(workspace_id: str, reader: Reader) -> int:
    """The cards waiting for ``reader``: the badge of every page."""
    if reader.person is not None and not reader.may_answer:
        return 0
    connection = reading_connection()
    figures = [OPEN] if reader.person is None else [ANYONE, VOTED, NAMED]
    marks = _marks(connection)(2 + len(figures))
    rows = await connection.execute_query_dict(
        f"SELECT figure, n FROM inbox_count WHERE workspace_id = {marks[0]} AND agent_id = '' "
        f"AND day = '' AND figure IN ({', '.join(marks[1:-1])}) AND person IN ('', {marks[-1]})",
        [workspace_id, *figures, reader.person or ""],
    )
    sums: dict[str, int] = defaultdict(int)
    for row in rows:
        sums[str(row["figure"])] += int(row["n"])
    return _waiting(sums, reader)


def _waiting(sums: dict[str, int], reader: Reader) -> int:
    if reader.person is None:
        return sums[OPEN]
    if not reader.may_answer:
        return 0
    return sums[ANYONE] - sums[VOTED] + sums[NAMED]


async def agents_asking(workspace_id: str) -> list[str]:
    """The agents with a card open in the workspace."""
    connection = reading_connection()
    marks = _marks(connection)(2)
    rows = await connection.execute_query_dict(
        f"SELECT agent_id FROM inbox_count WHERE workspace_id = {marks[0]} AND figure = "
        f"{marks[1]} AND person = '' AND day = '' AND agent_id <> '' AND n > 0",
        [workspace_id, OPEN],
    )
    return [str(row["agent_id"]) for row in rows]


async def _running_offline(workspace_id: str, agent_id: str | None) -> int:
    """Running tasks whose agent is offline: the agents that run tasks are few, and only
    they have a ``running`` row."""
    connection = reading_connection()
    marks = _marks(connection)(4)
    rows = await connection.execute_query_dict(
        "SELECT COALESCE(SUM(c.n), 0) AS n FROM inbox_count c JOIN agent a ON a.id = "
        f"c.agent_id WHERE c.workspace_id = {marks[0]} AND c.figure = {marks[1]} "
        f"AND c.person = '' AND c.day = '' AND c.agent_id <> '' AND a.status = {marks[2]}"
        + (f" AND c.agent_id = {marks[3]}" if agent_id else ""),
        [workspace_id, RUNNING, AgentStatus.OFFLINE.value, *([agent_id] if agent_id else [])],
    )
    return int(rows[0]["n"] or 0) if rows else 0


def _marks(connection: Connection) -> Callable[[int], list[str]]:
    """The placeholders of ``n`` parameters in the connection's dialect."""
    if connection.capabilities.dialect == "postgres":
        return lambda n: [f"${i}" for i in range(1, n + 1)]
    return lambda n: ["?"] * n


# --- counted from the rows ------------------------------------------------------------


async def recount(workspace_id: str, connection: Connection, *, since: date) -> dict[_Key, int]:
    """Every figure counted from the rows (days from ``since`` on), as ``Changes`` keys:
    what the kept rows must hold. Reads every pending card and every running or recently
    ended task of the workspace: for a migration and for tests, never for a page."""
    counted = Changes()
    cards = await Interaction.filter(
        workspace_id=workspace_id, status=InteractionStatus.PENDING
    ).using_db(connection)
    for card in cards:
        counted.card_opened(card)
    start = datetime(since.year, since.month, since.day, tzinfo=UTC)
    tasks = await Task.filter(workspace_id=workspace_id).filter(
        status=TaskStatus.RUNNING.value
    ).using_db(connection) + await Task.filter(
        workspace_id=workspace_id,
        status__in=[TaskStatus.FAILED.value, *DONE_STATUSES],
        updated_at__gte=start,
    ).using_db(connection)
    for task in tasks:
        counted.task_moved(task, None, task.updated_at)
    return {key: n for key, n in counted.deltas.items() if n}


async def kept(workspace_id: str, connection: Connection, *, since: date) -> dict[_Key, int]:
    """The kept rows that are not zero (days from ``since`` on), as ``recount`` gives them."""
    rows = await InboxCount.filter(workspace_id=workspace_id).using_db(connection)
    return {
        (r.figure, r.person, r.agent_id, r.day): int(r.n)
        for r in rows
        if r.n and (not r.day or r.day >= since.isoformat())
    }


__all__ = [
    "NOBODY",
    "Changes",
    "Reader",
    "agents_asking",
    "changes",
    "collecting",
    "day_of",
    "first_day",
    "joined",
    "kept",
    "people",
    "read",
    "recount",
    "voter_of",
    "waiting",
    "waiting_on",
]
