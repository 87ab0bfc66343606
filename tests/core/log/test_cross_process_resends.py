"""A resend that races its first copy in another hub process is answered as its duplicate.

On PostgreSQL the append's first statement waits for the workspace's row lock while
another process holds it; whatever that process commits meanwhile is outside the
statement's snapshot. Here the other process is a plain connection doing what a hub
process does for an append: it takes the lock, stores the envelope and its effect (the task
moved on), and commits while this process's copy of the same envelope waits for the lock.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from hub import testing
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Task, Workspace
from hub.protocol.clock import utcnow
from hub.testing import eventually
from tests.core.scenario import make_agent

pytestmark = pytest.mark.skipif(
    testing.test_postgres_url() is None,
    reason="two processes racing on one row lock: PostgreSQL only (SQLite has one writer)",
)


def _dsn(database_url: str) -> str:
    parts = urlsplit(database_url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, "", ""))


async def _waiting_for_a_lock(other: asyncpg.Connection) -> bool:
    waiting = await other.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1",
        other.get_server_pid(),
    )
    return bool(waiting)


async def test_a_resend_committed_by_another_process_meanwhile_is_a_duplicate(
    workspace: Workspace, database_url: str
) -> None:
    agent = await make_agent(workspace)
    by_agent, task_id = f"agent:{agent.id}", new_id("task")
    await append_event(
        workspace.id,
        "task.created",
        {"taskId": task_id, "title": "Migrate", "targetAgentId": agent.id},
        actor="user:usr_x",
    )
    await append_event(workspace.id, "task.accepted", {"taskId": task_id}, actor=by_agent)
    envelope_id, done = "evt_done_1", {"taskId": task_id, "status": "succeeded"}

    other = await asyncpg.connect(_dsn(database_url))
    try:
        transaction = other.transaction()
        await transaction.start()
        sequence = await other.fetchval(
            "UPDATE workspace SET last_sequence = last_sequence + 1 WHERE id = $1 "
            "RETURNING last_sequence",
            workspace.id,
        )
        resend = asyncio.create_task(
            append_event(
                workspace.id,
                "task.status_changed",
                done,
                actor=by_agent,
                envelope_id=envelope_id,
                task_id=task_id,
            )
        )
        await eventually(lambda: _waiting_for_a_lock(other), within=10)
        now = utcnow()
        await other.execute(
            "INSERT INTO event (workspace_id, sequence, id, type, actor, task_id, payload, "
            "occurred_at, recorded_at) VALUES ($1, $2, $3, 'task.status_changed', $4, $5, "
            "$6::jsonb, $7, $7)",
            workspace.id,
            sequence,
            envelope_id,
            by_agent,
            task_id,
            json.dumps(done),
            now,
        )
        await other.execute("UPDATE task SET status = 'succeeded' WHERE id = $1", task_id)
        await transaction.commit()
        result = await asyncio.wait_for(resend, timeout=10)
    finally:
        await other.close()

    assert result.duplicate
    assert result.sequence == sequence
    assert (await Task.get(id=task_id)).status == "succeeded"
    # The resend took no sequence of its own: the log stays gap-free.
    assert (await Workspace.get(id=workspace.id)).last_sequence == sequence
