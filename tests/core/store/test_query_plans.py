"""Every page and list reads a big workspace through an index, not by reading it whole.

The queries are the real ones: the core's functions the pages and the API call are run on a
workspace with a few thousand rows, their SQL is recorded, and the database is asked how it
would run each (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` on PostgreSQL), with the
statistics a live database has of its tables. A workspace of fifty thousand tasks makes a
query that reads every one of them, or sorts them all, cost seconds on every page.

Every table a page reads has an index that starts with ``workspace_id``, so finding the
workspace is never the problem: one workspace is the big one. Each hot query therefore also
names the column its index must search by beyond the workspace, or asks that the index
give the rows in the list's order, so that a page of 50 is 50 rows read.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tortoise import connections

from hub.core.agents.presence import has_open_work
from hub.core.agents.registry import agents_page, list_agents
from hub.core.ids import new_id
from hub.core.log import events
from hub.core.log.events import append_event
from hub.core.people.audit import audit_page
from hub.core.store.models import Artifact, Conversation, Event, Interaction, Message, Task
from hub.core.store.statistics import gather_statistics
from hub.core.store.transactions import in_transaction
from hub.core.work.conversations import list_conversations
from hub.core.work.inbox import inbox
from hub.core.work.inbox_counts import Reader
from hub.core.work.interactions import list_interactions
from hub.core.work.messages import list_messages
from hub.core.work.task_tree import child_tree, task_tree
from hub.core.work.tasks import list_tasks, task_detail
from tests.core.queries import Statement, record_statements
from tests.web.pages.world import build_world

# The tables that grow with the work done in a workspace. (A workspace has a few agents: a
# plan may read them all.)
GROWING = ("event", "task", "message", "interaction", "artifact", "conversation")


@dataclass(frozen=True)
class Hot:
    """A query every page or list makes, found among the recorded SQL by pieces of its
    text, and what its index must do: search by ``by`` (beyond the workspace), and/or hand
    the rows over in the list's order (``ordered``), so a page never sorts the workspace."""

    reads: str
    table: str
    marks: tuple[str, ...]
    by: str | None = None
    ordered: bool = False


HOT = (
    Hot("the task list", "task", ('"workspace_id"=? ORDER BY "created_at" DESC',), ordered=True),
    Hot("a conversation's tasks", "task", ('"conversation_id"=?',), "conversation_id", True),
    Hot("a task's children", "task", ('"parent_id"=?',), "parent_id", ordered=True),
    Hot("the children of the tasks listed", "task", ('"parent_id" IN',), "parent_id"),
    Hot("the inbox's failed and done tasks", "task", ('"updated_at">=?',), "updated_at"),
    Hot("a page of them", "task", ('"updated_at">=?', 'ORDER BY "updated_at" DESC'), ordered=True),
    Hot("the cards waiting", "interaction", ('"status"=?', 'ORDER BY "created_at"'), ordered=True),
    Hot("a task's timeline", "event", ('"task_id" IN',), "task_id"),
    Hot("the audit trail", "event", ('"type" IN',), "sequence"),
    Hot("a task's artifacts", "artifact", ('"task_id"=?',), "task_id"),
    Hot("a task's messages", "message", ('"task_id"=?',), "task_id"),
    Hot("a conversation's messages", "message", ('"conversation_id"=?',), "conversation_id", True),
    Hot("a task's cards", "interaction", ('"task_id"=?',), "task_id"),
    Hot("the conversation list", "conversation", ('ORDER BY "updated_at"',), ordered=True),
    Hot("the agent list", "agent", ('ORDER BY "created_at"',), ordered=True),
    Hot("an agent's open work", "task", ('"target_agent_id" IN (?', '"status" IN ('),
        "target_agent_id"),
)  # fmt: skip


async def _hot_statements(
    workspace_id: str, user_id: str, monkeypatch: pytest.MonkeyPatch
) -> list[Statement]:
    """What the inbox, the task list's tabs, a task's page, a conversation's page, the
    agent list and the audit trail send, on a workspace with a little of everything."""
    world = await build_world(workspace_id, user_id)
    by_agent = f"agent:{world.agent.id}"
    done = await list_tasks(workspace_id, limit=10)
    for task in done.items[1:]:
        await append_event(
            workspace_id, "task.completed", {"taskId": task.id, "summary": "ok"}, actor=by_agent
        )
    await _fill(workspace_id)
    statements = record_statements(monkeypatch)
    await inbox(workspace_id)
    await inbox(workspace_id, reader=Reader(user_id))
    await inbox(workspace_id, section="recentlyDone")
    for view in (None, "active", "waiting_for_me", "done"):
        listed = await list_tasks(workspace_id, status=view)
        await task_tree(workspace_id, listed.items)
    await task_detail(workspace_id, world.task_id)
    await child_tree(workspace_id, world.task_id)
    await list_interactions(workspace_id, task_id=world.task_id)
    await list_messages(workspace_id, world.conversation_id)
    await list_tasks(workspace_id, conversation_id=world.conversation_id, limit=50)
    await list_conversations(workspace_id)
    await list_agents(workspace_id)
    await agents_page(workspace_id, limit=50)
    await audit_page(workspace_id, limit=50)
    await has_open_work(world.agent.id)  # as each agent of a fleet comes and goes
    monkeypatch.undo()
    return [s for s in statements if s.sql.lstrip().upper().startswith("SELECT")]


FILLER_TASKS = 2000


async def _fill(workspace_id: str) -> None:
    """Rows enough for the statistics to show a workspace's shape: most tasks done, some
    of them steps of others, a few events each, threads of messages, cards and artifacts.
    Written as rows, not through the log: only how they spread matters here."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    statuses = ("succeeded", "succeeded", "succeeded", "cancelled", "failed", "running")
    conversation = await Conversation.create(
        id="conv_filler", workspace_id=workspace_id, title="Filler", created_by="system",
        created_at=start, updated_at=start,
    )  # fmt: skip
    tasks = [
        Task(
            id=f"task_filler{i:05}", workspace_id=workspace_id, title=f"Filler {i}",
            status=statuses[i % len(statuses)], created_by="system",
            parent_id=f"task_filler{i // 10:05}" if i % 5 == 4 else None,
            conversation_id=conversation.id if i % 50 == 0 else None,
            created_at=start + timedelta(minutes=i), updated_at=start + timedelta(minutes=i),
        )
        for i in range(FILLER_TASKS)
    ]  # fmt: skip
    await Task.bulk_create(tasks, batch_size=500)
    at = start + timedelta(days=1)
    await Event.bulk_create(
        [
            Event(
                workspace_id=workspace_id, sequence=1_000_000 + n, id=f"filler-{n}",
                type="task.status_changed", actor="system", task_id=tasks[n // 4].id,
                payload={}, occurred_at=at, recorded_at=at,
            )
            for n in range(4 * FILLER_TASKS)
        ],
        batch_size=500,
    )  # fmt: skip
    await Message.bulk_create(
        [
            Message(
                id=f"msg_filler{n:05}", workspace_id=workspace_id, conversation_id=conversation.id,
                author="system", content="filler", task_id=tasks[n].id, created_at=at,
            )
            for n in range(FILLER_TASKS)
        ],
        batch_size=500,
    )  # fmt: skip
    await Interaction.bulk_create(
        [
            Interaction(
                id=f"int_filler{n:05}", workspace_id=workspace_id, task_id=tasks[n * 4].id,
                type="approval", status="resolved", created_at=at,
            )
            for n in range(FILLER_TASKS // 4)
        ],
        batch_size=500,
    )  # fmt: skip
    await Artifact.bulk_create(
        [
            Artifact(
                id=f"art_filler{n:05}", workspace_id=workspace_id, task_id=tasks[n * 4].id,
                name="report", url="https://example.com/r", created_by="system", created_at=at,
            )
            for n in range(FILLER_TASKS // 4)
        ],
        batch_size=500,
    )  # fmt: skip


async def _statistics(*, postgres: bool) -> None:
    """The statistics the planner has of a live database: what the hub gathers as it opens
    on SQLite (``gather_statistics``), what autovacuum gathers on PostgreSQL. Gathered on this
    workspace they say what matters: one workspace holds every row, a task a few of them."""
    if postgres:
        await connections.get("default").execute_script("ANALYZE")
    else:
        await gather_statistics()


async def _plan(statement: Statement, *, postgres: bool) -> list[str]:
    if not postgres:
        rows = await connections.get("default").execute_query_dict(
            f"EXPLAIN QUERY PLAN {statement.sql}", statement.values
        )
        return [str(row["detail"]) for row in rows]
    # A few thousand rows are read whole faster than through any index, straight or by a
    # bitmap of the workspace's rows; priced out, the planner shows the index it takes on a
    # big table, or a sequential scan when it has none to take.
    async with in_transaction() as connection:
        await connection.execute_query("SET LOCAL enable_seqscan = off")
        await connection.execute_query("SET LOCAL enable_bitmapscan = off")
        rows = await connection.execute_query_dict(f"EXPLAIN {statement.sql}", statement.values)
    return [str(row["QUERY PLAN"]) for row in rows]


def _full_scans(plan: list[str], *, postgres: bool) -> list[str]:
    if postgres:
        return [line for line in plan if re.search(rf"Seq Scan on ({'|'.join(GROWING)})\b", line)]
    return [
        line
        for line in plan
        if re.match(rf"SCAN ({'|'.join(GROWING)})\b", line) and "USING" not in line
    ]


def _searched_by(plan: list[str], column: str, *, postgres: bool) -> bool:
    if postgres:
        conditions = [line for line in plan if "Index Cond:" in line]
    else:
        conditions = re.findall(r"USING (?:COVERING )?INDEX \S+ \(([^)]*)\)", "\n".join(plan))
    return any(re.search(rf"\b{column}\b", condition) for condition in conditions)


def _sorts_all(plan: list[str], *, postgres: bool) -> bool:
    if postgres:
        return any(re.match(r"\s*(->\s*)?Sort\b", line) for line in plan)
    # "RIGHT PART OF ORDER BY" sorts only rows that tie on the index's order.
    return any("USE TEMP B-TREE FOR ORDER BY" in line for line in plan)


async def test_hot_queries_read_through_indexes(
    make_user: Any, is_postgres: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, workspace = await make_user("owner")
    statements = await _hot_statements(workspace.id, user.id, monkeypatch)
    await _statistics(postgres=is_postgres)
    problems: list[str] = []  # each once, though a page sends its queries more than once
    for statement in statements:
        plan = await _plan(statement, postgres=is_postgres)
        for scan in _full_scans(plan, postgres=is_postgres):
            problems.append(f"reads a whole table ({scan.strip()}):\n  {statement.sql}")
    for hot in HOT:
        found = [
            s
            for s in statements
            if f'FROM "{hot.table}"' in s.sql
            and all(piece in _normalised(s.sql) for piece in hot.marks)
        ]
        assert found, f"{hot.reads}: no such query was sent; is HOT still up to date?"
        for statement in found:
            plan = await _plan(statement, postgres=is_postgres)
            if hot.by and not _searched_by(plan, hot.by, postgres=is_postgres):
                problems.append(f"{hot.reads}: no index searches by {hot.by}:\n  {plan}")
            if hot.ordered and _sorts_all(plan, postgres=is_postgres):
                problems.append(f"{hot.reads}: sorts every row it reads:\n  {plan}")
    assert problems == [], "\n".join(dict.fromkeys(problems))


def _normalised(sql: str) -> str:
    """PostgreSQL numbers its parameters ($1, $2); the marks are written with SQLite's ``?``."""
    return re.sub(r"\$\d+", "?", sql)


async def test_an_append_looks_a_batchs_envelopes_up_by_their_key(
    make_user: Any, is_postgres: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch of appends first counts which of its envelopes the log holds already (an
    agent resending after a reconnect): by each one's key, not by reading every event of
    the workspace, which at 300,000 events put 25 ms before every agent's and person's
    write."""
    user, workspace = await make_user("owner")
    await build_world(workspace.id, user.id)
    await _fill(workspace.id)
    await _statistics(postgres=is_postgres)
    statements: list[Statement] = []
    take = events._take_sequences

    async def recorded(connection: Any, *args: Any) -> Any:
        # Inside the batch's transaction, whose connection the recorders do not see.
        real = connection.execute_query_dict

        async def kept(sql: str, values: Any = None) -> Any:
            statements.append(Statement(sql, values))
            return await real(sql, values)

        monkeypatch.setattr(connection, "execute_query_dict", kept)
        return await take(connection, *args)

    monkeypatch.setattr(events, "_take_sequences", recorded)
    await asyncio.gather(
        *(
            append_event(
                workspace.id,
                "conversation.created",
                {"conversationId": new_id("conversation"), "title": f"Talk {n}"},
                actor=f"user:{user.id}",
            )
            for n in range(3)
        )
    )
    monkeypatch.undo()
    bumps = [s for s in statements if "last_sequence = last_sequence +" in s.sql]
    assert bumps, "no sequences were taken: has the statement changed?"
    for statement in bumps:
        plan = await _plan(statement, postgres=is_postgres)
        # (The workspace's own row is found by its id: the envelope's actor names the log's.)
        assert _searched_by(plan, "actor", postgres=is_postgres), plan
        assert not _full_scans(plan, postgres=is_postgres), plan
