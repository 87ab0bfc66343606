"""What SQLite's query planner knows of the tables: statistics gathered as the hub opens.

PostgreSQL keeps its own (autovacuum analyses a table as it changes). SQLite keeps none
until ``ANALYZE`` is run, and without them its planner, knowing nothing of how rows spread,
takes an index that hands the rows over in the query's order before one that finds them: a
task's timeline (``task_id IN (…) ORDER BY sequence``) walked the workspace's whole log in
order instead of reading the task's events and sorting them. With statistics it knows that
a workspace may hold most of a table and a task few of its rows.

The reader's connection (``hub.core.store.sqlite_reader``) loads them when it opens, so they
are gathered first, right after the ORM is set up. ``analysis_limit`` samples each index
rather than reading it whole, so a large database opens in milliseconds more, not seconds.
The spread of rows changes slowly: what a restart (an upgrade, at the latest) gathers
serves until the next.
"""

from __future__ import annotations

import logging

from tortoise import connections

from hub.core.store.sqlite_reader import WRITER

logger = logging.getLogger(__name__)

# Rows sampled per index: SQLite's documentation suggests a few hundred to a thousand.
ANALYSIS_LIMIT = 1000


async def gather_statistics() -> None:
    """Analyse every table for the planner (SQLite; call it before the first read).

    A database that cannot be written to just now (another process holding the lock past
    the busy timeout, a full disk) opens without fresh statistics: slower plans are no
    reason not to start."""
    try:
        await connections.get(WRITER).execute_script(
            f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}; ANALYZE;"
        )
    except Exception as error:  # whatever SQLite refuses, the hub still opens
        logger.warning("planner statistics not gathered: %s", error)
