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

Statistics gathered on a database that then grows mislead as much as none: a hub started
empty planned a search by reading every document and asking the text index about each, as
fits ten rows (0.35 s a search at 3,000 tasks, a minute at 50,000). ``StatisticsKeeper``
therefore gathers them again once the tables have doubled since the last time (a cheap
look, each table's highest rowid, once a minute), and has the reader load them: SQLite
reads statistics only when a connection opens or is told to.
"""

from __future__ import annotations

import logging

from tortoise import connections

from hub.core.store.sqlite_reader import READER, WRITER, reading_connection

logger = logging.getLogger(__name__)

# Rows sampled per index: SQLite's documentation suggests a few hundred to a thousand.
ANALYSIS_LIMIT = 1000
# Gather again when the tables have grown this much since the last time, and by this many
# rows at least (a small database plans well with any statistics).
GROWTH = 2.0
MIN_NEW_ROWS = 1000
CHECK_PERIOD_S = 60.0
# The tables a workspace grows; their highest rowid says how big they are without a count.
_GROWING = ("event", "task", "message", "interaction", "artifact", "agent", "search_document")


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


async def database_size() -> int:
    """About how many rows the growing tables hold: the sum of their highest rowids (read
    beside the writer: a look need not wait for its batch)."""
    sizes = " + ".join(f"(SELECT coalesce(max(rowid), 0) FROM {table})" for table in _GROWING)
    _, rows = await reading_connection().execute_query(f"SELECT {sizes}")
    return int(rows[0][0])


async def reload_statistics() -> None:
    """Have the reader's connection plan with the statistics gathered last. It reads them
    as it opens, or on ``ANALYZE sqlite_schema``, which only loads (it writes nothing, but
    SQLite refuses it on a connection that may not write, so that is lifted for it)."""
    if READER not in connections.db_config:
        return
    reader = connections.get(READER)
    await reader.execute_script("PRAGMA query_only = OFF")
    try:
        await reader.execute_script("ANALYZE sqlite_schema")
    finally:  # whatever happened, the reader stays one that cannot write
        await reader.execute_script("PRAGMA query_only = ON")


class StatisticsKeeper:
    """Gathers SQLite's statistics again as the database outgrows them (module docstring);
    the host runs ``look`` every ``CHECK_PERIOD_S``."""

    def __init__(self) -> None:
        self._gathered_at: int | None = None

    async def look(self) -> bool:
        """Gather again if the tables have doubled since the last time; True if it did. The
        first look only notes the size the statistics of the database's opening are for."""
        size = await database_size()
        last = self._gathered_at
        if last is None:
            self._gathered_at = size
            return False
        if size < last * GROWTH or size - last < MIN_NEW_ROWS:
            return False
        await gather_statistics()
        await reload_statistics()
        self._gathered_at = size
        logger.info("planner statistics gathered again at about %d rows", size)
        return True
