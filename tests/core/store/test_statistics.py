"""SQLite's planner statistics follow the database as it grows (hub.core.store.statistics).

A hub started on an almost empty database gathered statistics for ten rows and planned with
them from then on: a search read every document and asked the text index about each.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from tortoise import connections
from tortoise.exceptions import OperationalError

from hub.core.store.models import Task, Workspace
from hub.core.store.sqlite_reader import READER
from hub.core.store.statistics import MIN_NEW_ROWS, StatisticsKeeper, gather_statistics
from hub.core.work import search as search_module
from tests.core.agent_reports import make_agent

# The search's join as SQLite would order it by itself: the plan statistics decide.
UNORDERED = (
    "SELECT d.ident FROM search_text JOIN search_document AS d ON d.entry = search_text.rowid"
    " WHERE search_text MATCH ? AND d.workspace_id = ?"
)


@pytest.fixture(autouse=True)
def _sqlite_only(is_postgres: bool) -> None:
    if is_postgres:
        pytest.skip("PostgreSQL's autovacuum keeps its statistics")


async def _plan(sql: str, values: list[object]) -> list[str]:
    _, rows = await connections.get(READER).execute_query(f"EXPLAIN QUERY PLAN {sql}", values)
    return [str(row[3]) for row in rows]


def _reads_the_index_first(plan: list[str]) -> bool:
    scans = [line for line in plan if line.startswith(("SCAN", "SEARCH"))]
    return bool(scans) and scans[0].startswith("SCAN search_text VIRTUAL TABLE")


async def _grow(workspace: Workspace, tasks: int) -> None:
    now = datetime.now(UTC)
    await Task.bulk_create(
        [
            Task(
                id=f"task_grown{n:06d}",
                workspace_id=workspace.id,
                title=f"migrate shard {n}",
                status="queued",
                created_by="user:usr_me",
                created_at=now,
                updated_at=now,
            )
            for n in range(tasks)
        ],
        batch_size=500,
    )


async def _statistics_of_a_small_workspace(workspace: Workspace) -> None:
    """Statistics gathered while the workspace holds three agents, loaded by the reader."""
    for name in ("Ada", "Bea", "Cy"):
        await make_agent(workspace, name)
    await gather_statistics()
    await connections.get(READER).close()  # the reader opens again, with these statistics


async def test_a_search_reads_its_index_first_whatever_the_statistics(
    workspace: Workspace,
) -> None:
    await _statistics_of_a_small_workspace(workspace)
    await _grow(workspace, 3 * MIN_NEW_ROWS)
    assert not _reads_the_index_first(await _plan(UNORDERED, ['"migrate"*', workspace.id]))
    words = ['"migrate"*', workspace.id, 1.0, search_module.RANKED, "%migrate%", 51]
    searched = await _plan(search_module._SQLITE.format(after=""), words)
    assert _reads_the_index_first(searched), searched


async def test_statistics_are_gathered_again_once_the_tables_doubled(
    workspace: Workspace,
) -> None:
    keeper = StatisticsKeeper()
    await _statistics_of_a_small_workspace(workspace)
    assert await keeper.look() is False  # notes the size its statistics are for
    await _grow(workspace, 3 * MIN_NEW_ROWS)
    assert not _reads_the_index_first(await _plan(UNORDERED, ['"migrate"*', workspace.id]))
    assert await keeper.look() is True
    # The reader plans with what was gathered, without opening again, and still cannot write.
    assert _reads_the_index_first(await _plan(UNORDERED, ['"migrate"*', workspace.id]))
    with pytest.raises(OperationalError, match="readonly"):
        await connections.get(READER).execute_query("DELETE FROM task")
    assert await keeper.look() is False  # until the tables double again
