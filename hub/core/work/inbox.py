"""The inbox (spec §6): what needs the person now, what went wrong, what finished lately.

Three sections, each with a count for the badges:

* **waiting for me** — cards (interactions) still open, the oldest first: first asked, first
  answered, and an agent blocked longest is the one most worth unblocking (the most urgent
  first, so the page after it holds the younger cards);
* **needs attention** — tasks that failed lately, and running tasks whose agent lost its
  connection (spec §7.4: shown, not failed, until the grace period ends);
* **recently done** — top-level tasks that succeeded or were cancelled lately.

"Lately" is a number of whole days (UTC; this day and the six before by default) so the
sections stay a to-do list, not a history; the task list holds the history. A person can
narrow the inbox to one agent (every section) and to one risk (the cards: tasks carry no
risk of their own).

"Waiting for me" is the person's own: the cards they may answer (owners and members, and
only the approvers a card's policy names) and have not voted on; a viewer has none. The
counts are kept by the projection (``hub.core.work.inbox_counts``), exact, and read as a few
rows whatever the workspace holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from tortoise.expressions import Q, Subquery
from tortoise.queryset import QuerySet

from hub.core.agents.registry import agents_by_id
from hub.core.approvals.permissions import ANSWERING_ROLES
from hub.core.store.models import (
    Agent,
    AgentStatus,
    Interaction,
    InteractionStatus,
    Membership,
    Role,
    Task,
)
from hub.core.store.paging import BadCursor, Order, Page, after, cut, decode, page
from hub.core.task_states import TaskStatus
from hub.core.work import inbox_counts
from hub.core.work.inbox_counts import NOBODY, Reader
from hub.core.work.views import interaction_view, task_view
from hub.protocol.clock import iso, utcnow
from hub.protocol.interactions import Risk

RECENT_DAYS = 7
DEFAULT_LIMIT = 50
SECTIONS = ("waitingForMe", "needsAttention", "recentlyDone")

# Each section pages in its own order; a section's cursor names the section, so one cannot
# be passed to another.
_ORDERS = {
    "waitingForMe": Order("inbox.waitingForMe", ("created_at",), descending=False),
    "needsAttention": Order("inbox.needsAttention", ("updated_at",)),
    "recentlyDone": Order("inbox.recentlyDone", ("updated_at",)),
}


@dataclass(frozen=True)
class Inbox:
    """One read of the inbox, its rows as the store holds them: the API answers with its
    ``view()``, and a page renders the rows themselves without reading them again."""

    counts: dict[str, int]
    cards: list[Interaction]
    attention: list[Task]
    finished: list[Task]
    tasks: dict[str, Task]  # the cards' tasks, by id
    agents: dict[str, Agent]  # every row's agent, by id
    cursors: dict[str, str | None]
    section: str | None  # one section's page alone, or all three

    def view(self) -> dict[str, Any]:
        """The counts and each section's page as the API gives them, with ``nextCursors``
        by section, or ``nextCursor`` for the one section asked for."""
        items = {
            "waitingForMe": [
                {
                    "kind": "interaction",
                    "reason": "waiting_for_you",
                    "at": iso(card.created_at),
                    "interaction": interaction_view(card),
                    "task": _brief_task(self.tasks.get(card.task_id or "")),
                    "agent": _brief_agent(self.agents.get(card.agent_id or "")),
                }
                for card in self.cards
            ],
            "needsAttention": [
                {
                    "kind": "task",
                    "reason": "failed" if task.status == TaskStatus.FAILED else "agent_offline",
                    "at": iso(task.updated_at),
                    "task": task_view(task),
                    "agent": _brief_agent(self.agents.get(task.target_agent_id or "")),
                }
                for task in self.attention
            ],
            "recentlyDone": [
                {
                    "kind": "task",
                    "reason": task.status,
                    "at": iso(task.updated_at),
                    "task": task_view(task),
                    "agent": _brief_agent(self.agents.get(task.target_agent_id or "")),
                }
                for task in self.finished
            ],
        }
        wanted = SECTIONS if self.section is None else (self.section,)
        answer: dict[str, Any] = {"counts": self.counts, **{name: items[name] for name in wanted}}
        if self.section is None:
            answer["nextCursors"] = self.cursors
        else:
            answer["nextCursor"] = self.cursors[self.section]
        return answer


async def inbox(workspace_id: str, **options: Any) -> dict[str, Any]:
    """The inbox as the API answers it: ``read_inbox``'s ``view()`` (the same arguments)."""
    return (await read_inbox(workspace_id, **options)).view()


async def read_inbox(
    workspace_id: str,
    *,
    limit: int = DEFAULT_LIMIT,
    reader: Reader = NOBODY,
    days: int = RECENT_DAYS,
    now: datetime | None = None,
    agent_id: str | None = None,
    risk: Risk | None = None,
    section: str | None = None,
    cursor: str | None = None,
) -> Inbox:
    """The counts and the first page of every section, each section's next cursor in
    ``cursors``; or, given ``section``, that section's page after ``cursor`` alone.
    "Waiting for me" is ``reader``'s (by default every open card: nobody's in particular)."""
    if cursor and section is None:
        raise BadCursor(
            "An inbox cursor belongs to one section: name it.",
            parameter="cursor",
            hint="Send section= with the cursor taken from nextCursors under that name.",
        )
    now = now or utcnow()
    since = inbox_counts.first_day(now, days)
    sections = _sections(workspace_id, datetime.combine(since, time(), UTC), reader, agent_id)
    wanted = SECTIONS if section is None else (section,)
    start = {name: cursor if name == section else None for name in SECTIONS}

    cards: Page[Interaction] = Page([], None)
    cards_count: int | None = None
    if "waitingForMe" in wanted:
        order = _ORDERS["waitingForMe"]
        if risk is None:
            cards = await page(
                sections.open_cards, order, limit=limit, cursor=start["waitingForMe"]
            )
        else:
            # The risk is the agent's, inside the card it sent; a workspace's open cards are
            # a to-do list, few enough to read whole.
            every = [
                c for c in await sections.open_cards.order_by(*order.by()) if _risk_of(c) == risk
            ]
            cards_count = len(every)
            if start["waitingForMe"]:
                at, last_id = decode(order, start["waitingForMe"] or "")
                every = [c for c in every if (c.created_at, c.id) > (at, last_id)]
            cards = cut(every, order, limit)
    attention: Page[Task] = Page([], None)
    if "needsAttention" in wanted:
        order = _ORDERS["needsAttention"]
        attention = await _merged_page(
            [sections.failed, sections.connection_lost], order, limit, start["needsAttention"]
        )
    finished: Page[Task] = Page([], None)
    if "recentlyDone" in wanted:
        finished = await _merged_page(
            sections.done, _ORDERS["recentlyDone"], limit, start["recentlyDone"]
        )

    related = await _tasks_by_id(workspace_id, [c.task_id for c in cards.items if c.task_id])
    agents = await agents_by_id(
        workspace_id,
        [
            *(c.agent_id for c in cards.items),
            *(t.target_agent_id for t in [*attention.items, *finished.items]),
        ],
    )
    counts = await inbox_counts.read(workspace_id, reader, agent_id=agent_id, since=since)
    if cards_count is not None:
        counts["waitingForMe"] = cards_count
    return Inbox(
        counts=counts,
        cards=cards.items,
        attention=attention.items,
        finished=finished.items,
        tasks=related,
        agents=agents,
        cursors={
            "waitingForMe": cards.next_cursor,
            "needsAttention": attention.next_cursor,
            "recentlyDone": finished.next_cursor,
        },
        section=section,
    )


def reader_of(membership: Membership) -> Reader:
    """The member whose inbox it is, and whether their role lets them answer."""
    return Reader(membership.user_id, Role(membership.role) in ANSWERING_ROLES)


async def waiting_count(workspace_id: str, reader: Reader = NOBODY) -> int:
    """The cards waiting for ``reader``: the badge of every page."""
    return await inbox_counts.waiting(workspace_id, reader)


@dataclass(frozen=True)
class _Sections:
    """The rows of each section, as queries not yet run."""

    open_cards: QuerySet[Interaction]
    failed: QuerySet[Task]
    connection_lost: QuerySet[Task]
    # One query per status: an index on (status, updated_at, id) reads each newest first,
    # where one query for both statuses would have to sort them all.
    done: list[QuerySet[Task]]


async def _merged_page(
    parts: list[QuerySet[Task]], order: Order, limit: int, cursor: str | None
) -> Page[Task]:
    """One page of a section made of ``parts`` (newest first): each part's page read in its
    index's order, then merged."""
    since_cursor = after(order, cursor) if cursor else Q()
    merged = [
        task
        for rows in parts
        for task in await rows.filter(since_cursor).order_by(*order.by()).limit(limit + 1)
    ]
    merged.sort(key=lambda t: (t.updated_at, t.id), reverse=True)
    return cut(merged, order, limit)


def _sections(
    workspace_id: str, since: datetime, reader: Reader, agent_id: str | None
) -> _Sections:
    of_agent = {"agent_id": agent_id} if agent_id else {}
    of_target = {"target_agent_id": agent_id} if agent_id else {}
    # A subquery, not the ids: a fleet of two thousand idle agents is mostly offline, and
    # the running tasks, which the index finds first, are few.
    offline = Agent.filter(
        workspace_id=workspace_id,
        status=AgentStatus.OFFLINE,
        **({"id": agent_id} if agent_id else {}),
    ).values("id")
    return _Sections(
        open_cards=Interaction.filter(
            _waiting_for(reader),
            workspace_id=workspace_id,
            status=InteractionStatus.PENDING,
            **of_agent,
        ),
        failed=Task.filter(
            workspace_id=workspace_id,
            status=TaskStatus.FAILED.value,
            updated_at__gte=since,
            **of_target,
        ),
        connection_lost=Task.filter(
            workspace_id=workspace_id,
            status=TaskStatus.RUNNING.value,
            target_agent_id__in=Subquery(offline),
        ),
        done=[
            Task.filter(
                workspace_id=workspace_id,
                parent_id=None,
                status=status.value,
                updated_at__gte=since,
                **of_target,
            )
            for status in (TaskStatus.SUCCEEDED, TaskStatus.CANCELLED)
        ],
    )


def _waiting_for(reader: Reader) -> Q:
    """The open cards that wait for ``reader`` (see ``hub.core.work.inbox_counts``)."""
    if reader.person is None:
        return Q()
    if not reader.may_answer:
        return Q(id__isnull=True)  # none: a card always has an id
    mark = inbox_counts.joined([reader.person])
    return (Q(waiting_on__isnull=True) & ~Q(voted_by__contains=mark)) | Q(waiting_on__contains=mark)


def _risk_of(card: Interaction) -> Risk | None:
    value = (card.payload or {}).get("risk")
    try:
        return Risk(value) if value else None
    except ValueError:
        return None


async def _tasks_by_id(workspace_id: str, ids: list[str]) -> dict[str, Task]:
    if not ids:
        return {}
    return {t.id: t for t in await Task.filter(workspace_id=workspace_id, id__in=ids)}


def _brief_task(task: Task | None) -> dict[str, Any] | None:
    if task is None:
        return None
    return {
        "id": task.id,
        "title": task.title,
        "status": task.status,
        "progress": task.progress,
        "conversationId": task.conversation_id,
    }


def _brief_agent(agent: Agent | None) -> dict[str, Any] | None:
    if agent is None:
        return None
    return {
        "id": agent.id,
        "name": agent.name,
        "status": AgentStatus(agent.status).value,
        "lastHeartbeatAt": iso(agent.last_heartbeat_at),
    }
