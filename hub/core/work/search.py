"""Search across a workspace's tasks, messages, cards and agents, best match first.

The index is the database's own (FTS5 on SQLite, a ``tsvector`` with a GIN index on
PostgreSQL) and is kept by it as rows are written (migration ``0021_search``). What a
person types is never handed to either as query syntax: it is split into words at
punctuation and spaces, the same split the index makes, and every word must begin a word
of the row (``deplo`` finds "deploy", ``task_01JD`` a task whose id starts so). Quotes,
``*``, ``-``, ``NEAR`` or ``OR`` are therefore plain text, and a query with no word left
is refused with a clear error rather than reaching the database. Agents are also found by
any part of their name.

Results page like every list (``hub.core.store.paging``): the cursor holds the last hit's
score and id. Only the newest ``RANKED`` (1,000) of the workspace's matches are ranked (on
SQLite those indexed last, on PostgreSQL those created last), with every agent found by
part of its name whatever its age. Their scores are relevance as the database computes it
at that moment, rounded to integers so that a score compares equal with itself across
pages. Older matches follow them, newest first, unranked: an unranked hit's score is its
place in that order less 2⁶², below every relevance, and a page of them reads only their
own rows. What this trades: a strong match with a thousand newer ones is listed by its age,
after them, not by its score (a second word, leaving fewer matches, ranks it again). What
it buys: scoring and sorting every match of a word that a quarter of 50,000 tasks hold took
about 100 ms before a page of 30 could be cut; now a page scores at most a thousand rows,
and on SQLite reads little more than those. A row indexed or changed while a person walks
the pages may shift the scores of others, or which matches are the newest, so a page can
miss or repeat a hit then, which a ranked list cannot avoid without holding a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tortoise.models import Model

from hub.core.agents.registry import public_status
from hub.core.errors import InvalidInput
from hub.core.store.models import Agent, Interaction, Message, Task
from hub.core.store.paging import BadCursor, Order, Page, cut, decode
from hub.core.store.sqlite_reader import reading_connection
from hub.protocol.clock import iso

MAX_QUERY_LENGTH = 200
MAX_WORDS = 8
SEARCH_ORDER = Order("search", ("score",))

# ASCII punctuation, spaces and control characters: where a query splits into words. The
# index splits its text at the same places (0021_search), so a word of one is a word of
# the other. Letters of other scripts stay together, as both indexes keep them.
_SEPARATORS = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\s]+")
_KINDS: dict[str, type[Model]] = {
    "task": Task,
    "message": Message,
    "card": Interaction,
    "agent": Agent,
}


class BadSearch(InvalidInput):
    status = 400
    code = "bad_search_query"
    hint = (
        f"Search for one to {MAX_WORDS} words of letters or digits, at most "
        f"{MAX_QUERY_LENGTH} characters: part of a title, a message, an agent's name or an id."
    )


@dataclass(frozen=True)
class SearchHit:
    """One row found: its kind (``task``, ``message``, ``card``, ``agent``), id, score and
    the row itself."""

    kind: str
    id: str
    score: int
    row: Any


def search_words(query: str) -> list[str]:
    """The words of what a person typed; ``BadSearch`` when there are none, or too many."""
    if len(query) > MAX_QUERY_LENGTH:
        raise BadSearch(f"The search is longer than {MAX_QUERY_LENGTH} characters.", parameter="q")
    words = [word.lower() for word in _SEPARATORS.split(query) if word]
    if not words:
        raise BadSearch("The search holds no word to look for.", parameter="q")
    if len(words) > MAX_WORDS:
        raise BadSearch(f"The search has more than {MAX_WORDS} words.", parameter="q")
    return words


def _like_pattern(query: str) -> str:
    """``%query%`` for LIKE, the query's own ``%``, ``_`` and ``\\`` taken literally."""
    escaped = re.sub(r"([\\%_])", r"\\\1", query.strip())
    return f"%{escaped}%"


# Relevance a match of an agent's name by any part adds, on each database's own scale
# (bm25 of a good match is a few units, ts_rank a fraction of one).
_NAME_PART = {"sqlite": 1.0, "postgres": 0.1}

# How many of a search's matches in the workspace are ranked: the newest (module docstring).
RANKED = 1000
# An unranked hit's score is its recency less this: below every ranked one, none negative.
_UNRANKED = 1 << 62
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# FTS5 hands its matches over in rowid order, newest first here, without sorting them: the
# scan stops at the LIMIT, and bm25() is computed for the rows it returns and no others.
# (``ORDER BY rank`` sorts inside FTS5, but after scoring every match: about 40 ms for a
# word 23,000 rows hold.) The workspace is search_document's, not the index's, so the LIMIT
# counts only the rows the join kept: other workspaces' matches lengthen the scan, never push
# this one's out of it. CROSS JOIN: SQLite then reads the index's matches first and looks
# each document up by its key; left to choose, a planner whose statistics date from a
# smaller database reads every document and asks the index about each. Agents found by part
# of their name are scored apart (``named``), whatever their age, and left out of the scan.
_SQLITE_LIKED = """liked(id, entry) AS (
  SELECT a.id, d.entry FROM agent AS a CROSS JOIN search_document AS d ON d.ident = a.id
   WHERE a.workspace_id = ?2 AND a.name LIKE ?5 ESCAPE '\\'
)"""

_SQLITE = f"""
WITH {_SQLITE_LIKED}, recent(entry, kind, id, relevance) AS (
  SELECT search_text.rowid, d.kind, d.ident, -bm25(search_text, 4.0, 2.0, 1.0)
    FROM search_text CROSS JOIN search_document AS d ON d.entry = search_text.rowid
   WHERE search_text MATCH ?1 AND d.workspace_id = ?2
     AND search_text.rowid NOT IN (SELECT entry FROM liked)
   ORDER BY search_text.rowid DESC LIMIT ?4 + ?6
), placed AS (
  SELECT *, row_number() OVER (ORDER BY entry DESC) AS place FROM recent
), named(id, relevance) AS (
  SELECT d.ident, -bm25(search_text, 4.0, 2.0, 1.0)
    FROM search_text CROSS JOIN search_document AS d ON d.entry = search_text.rowid
   WHERE search_text MATCH ?1 AND EXISTS (SELECT 1 FROM liked)
     AND +search_text.rowid IN (SELECT entry FROM liked)
), hits(kind, id, score) AS (
  SELECT kind, id, CAST(round(relevance * 1000000) AS INTEGER) FROM placed WHERE place <= ?4
  UNION ALL
  SELECT kind, id, entry - {_UNRANKED} FROM placed WHERE place > ?4
  UNION ALL
  SELECT 'agent', liked.id, CAST(round((?3 + coalesce(named.relevance, 0)) * 1000000) AS INTEGER)
    FROM liked LEFT JOIN named ON named.id = liked.id
)
SELECT kind, id, score FROM hits {{after}} ORDER BY score DESC, id DESC LIMIT ?6
"""

# The pages beyond the ranked hits: the workspace's older matches, newest first, from the
# cursor's on (``?3``, an index entry).
_SQLITE_UNRANKED = f"""
WITH {_SQLITE_LIKED}
SELECT d.kind, d.ident AS id, search_text.rowid - {_UNRANKED} AS score
  FROM search_text CROSS JOIN search_document AS d ON d.entry = search_text.rowid
 WHERE search_text MATCH ?1 AND d.workspace_id = ?2 AND search_text.rowid < ?3
   AND search_text.rowid NOT IN (SELECT entry FROM liked)
 ORDER BY search_text.rowid DESC LIMIT ?4
"""

_POSTGRES_TABLES = (("task", "task"), ("message", "message"), ("card", "interaction"))


def _postgres_recent(*, vectors: bool, rows: str, liked: str, older: str = "") -> str:
    """The workspace's newest ``rows`` matches of every kind (``older`` than a cursor's),
    agents found by ``liked`` part of their name left out. A GIN index finds a set of rows in
    no order, so each table's matches are still read from it, but only the newest ``rows``
    of them are kept (a bounded heap, not a sort of them all) and only those are scored."""
    parts = []
    for kind, table in (*_POSTGRES_TABLES, ("agent", "agent")):
        unnamed = f" AND r.name NOT ILIKE {liked}" if kind == "agent" else ""
        parts.append(
            f"(SELECT '{kind}' AS kind, r.id, r.created_at"
            f"{', r.search_vector' if vectors else ''} FROM {table} AS r, q"
            f" WHERE r.workspace_id = $1 AND r.search_vector @@ q.query{unnamed}{older}"
            f" ORDER BY r.created_at DESC, r.id DESC LIMIT {rows})"
        )
    return (
        f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS found"
        f" ORDER BY created_at DESC, id DESC LIMIT {rows}"
    )


# An unranked hit's score: the microsecond it was created, less _UNRANKED.
_POSTGRES_UNRANKED_SCORE = (
    f"CAST(round(extract(epoch FROM created_at) * 1000000) AS BIGINT) - {_UNRANKED}"
)

_POSTGRES = (
    "WITH q AS (SELECT to_tsquery('simple', $2) AS query),"
    f" recent AS ({_postgres_recent(vectors=True, rows='($5::int + $6::int)', liked='$4')}),"
    " placed AS (SELECT *, row_number() OVER (ORDER BY created_at DESC, id DESC) AS place"
    " FROM recent), hits AS ("
    "SELECT kind, id, CAST(round(ts_rank(search_vector, q.query) * 1000000) AS BIGINT) AS score"
    " FROM placed, q WHERE place <= $5"
    f" UNION ALL SELECT kind, id, {_POSTGRES_UNRANKED_SCORE} FROM placed WHERE place > $5"
    " UNION ALL SELECT 'agent', a.id, CAST(round(($3::real + CASE WHEN a.search_vector"
    " @@ q.query THEN ts_rank(a.search_vector, q.query) ELSE 0 END) * 1000000) AS BIGINT)"
    " FROM agent AS a, q WHERE a.workspace_id = $1 AND a.name ILIKE $4)"
    " SELECT kind, id, score FROM hits {after} ORDER BY score DESC, id DESC LIMIT $6"
)

# The pages beyond the ranked hits: the matches older than the cursor's (``$4``, ``$5``).
_POSTGRES_UNRANKED = (
    "WITH q AS (SELECT to_tsquery('simple', $2) AS query)"
    f" SELECT kind, id, {_POSTGRES_UNRANKED_SCORE} AS score FROM ("
    + _postgres_recent(
        vectors=False, rows="$6", liked="$3", older=" AND (r.created_at, r.id) < ($4, $5)"
    )
    + ") AS older ORDER BY score DESC, id DESC"
)


async def _ranked(
    workspace_id: str, query: str, words: list[str], limit: int, cursor: str | None
) -> list[dict[str, Any]]:
    connection = reading_connection()
    dialect = connection.capabilities.dialect
    key = decode(SEARCH_ORDER, cursor) if cursor else None
    # A ranked score is never negative: a cursor below zero stands among the unranked.
    unranked = key is not None and isinstance(key[0], int) and key[0] < 0
    like = _like_pattern(query)
    values: list[Any]
    if dialect == "postgres":
        tsquery = " & ".join(f"'{word}':*" for word in words)
        if key and unranked:
            values = [workspace_id, tsquery, like, _created_at(key[0]), key[1], limit]
            statement = _POSTGRES_UNRANKED
        else:
            after = "WHERE score < $7 OR (score = $7 AND id < $8)" if key else ""
            values = [workspace_id, tsquery, _NAME_PART[dialect], like, RANKED, limit]
            values += key or []
            statement = _POSTGRES.format(after=after)
    else:
        # Each word quoted: FTS5 reads it as a phrase, never as an operator or a column.
        match = " ".join(f'"{word}"*' for word in words)
        if key and unranked:
            values = [match, workspace_id, key[0] + _UNRANKED, limit, like]
            statement = _SQLITE_UNRANKED
        else:
            after = "WHERE score < ?7 OR (score = ?7 AND id < ?8)" if key else ""
            values = [match, workspace_id, _NAME_PART["sqlite"], RANKED, like, limit]
            values += key or []
            statement = _SQLITE.format(after=after)
    rows: list[dict[str, Any]] = await connection.execute_query_dict(statement, values)
    return rows


def _created_at(score: int) -> datetime:
    """The creation time an unranked hit's score on PostgreSQL stands for."""
    try:
        return _EPOCH + timedelta(microseconds=score + _UNRANKED)
    except OverflowError:
        raise BadCursor(
            "The cursor is not one this list gave out: it was changed, cut short, or belongs "
            "to another list.",
            parameter="cursor",
        ) from None


async def search(
    workspace_id: str, query: str, *, limit: int = 50, cursor: str | None = None
) -> Page[SearchHit]:
    """A page of what ``query`` finds in the workspace, best match first; ``BadSearch`` for
    a query with no word (or too many), ``BadCursor`` for a cursor of another list."""
    words = search_words(query)
    ranked = await _ranked(workspace_id, query, words, limit + 1, cursor)
    rows = await _rows(workspace_id, ranked)
    hits = [
        SearchHit(r["kind"], r["id"], int(r["score"]), rows[r["id"]])
        for r in ranked
        if r["id"] in rows
    ]
    return cut(hits, SEARCH_ORDER, limit)


async def _rows(workspace_id: str, ranked: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The rows of a page's hits, by id: one query per kind found, scoped again to the
    workspace."""
    found: dict[str, Any] = {}
    for kind, model in _KINDS.items():
        ids = [r["id"] for r in ranked if r["kind"] == kind]
        if ids:
            rows = await model.filter(workspace_id=workspace_id, id__in=ids)
            found.update({row.pk: row for row in rows})
    return found


def excerpt(text: str, words: Sequence[str], width: int = 200) -> str:
    """Up to ``width`` characters of ``text`` around the first place a word of the search
    begins, whole if it is short: what a result shows of a long message."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    lowered = text.lower()
    starts = [lowered.find(word) for word in words]
    first = min((s for s in starts if s >= 0), default=0)
    begin = max(0, min(first - width // 4, len(text) - width))
    shown = text[begin : begin + width]
    return ("…" if begin else "") + shown + ("…" if begin + width < len(text) else "")


def hit_view(hit: SearchHit, words: Sequence[str]) -> dict[str, Any]:
    """A hit on the wire: ``kind``, ``id``, ``title`` (``None`` for a message), ``text`` (what
    of its body the search found, cut short), and what places it: a task's or a card's
    ``status``, a message's ``conversationId``. Plain text: whoever shows it escapes it."""
    row = hit.row
    view: dict[str, Any] = {"kind": hit.kind, "id": hit.id}
    if isinstance(row, Task):
        body = " ".join(part for part in (row.description, row.summary) if part)
        view |= {"title": row.title, "text": excerpt(body, words), "status": row.status}
        view["createdAt"] = iso(row.created_at)
    elif isinstance(row, Message):
        view |= {"title": None, "text": excerpt(row.content, words)}
        view |= {"conversationId": row.conversation_id, "createdAt": iso(row.created_at)}
    elif isinstance(row, Interaction):
        payload = row.payload or {}
        view |= {
            "title": str(payload.get("title") or ""),
            "text": excerpt(str(payload.get("description") or ""), words),
            "status": str(row.status),
            "createdAt": iso(row.created_at),
        }
    else:
        view |= {"title": row.name, "text": row.runtime, "status": public_status(row)}
        view["createdAt"] = iso(row.created_at)
    return view


__all__ = [
    "MAX_QUERY_LENGTH",
    "MAX_WORDS",
    "SEARCH_ORDER",
    "BadSearch",
    "SearchHit",
    "excerpt",
    "hit_view",
    "search",
    "search_words",
]
