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
score and id. The scores are relevance as the database computes it at that moment, rounded
to integers so that a score compares equal with itself across pages; a row indexed or
changed while a person walks the pages may shift the scores of others, so a page can miss
or repeat a hit then, which a ranked list cannot avoid without holding a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tortoise.models import Model

from hub.core.agents.registry import public_status
from hub.core.errors import InvalidInput
from hub.core.store.models import Agent, Interaction, Message, Task
from hub.core.store.paging import Order, Page, cut, decode
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

# CROSS JOIN: SQLite then reads the index's matches first and looks each document up by its
# key. Left to choose, a planner whose statistics date from a smaller database reads every
# document and asks the index about each (0.34 s instead of 4 ms at 3,000 tasks).
_SQLITE = """
WITH hits(kind, id, relevance) AS (
  SELECT d.kind, d.ident, -bm25(search_text, 4.0, 2.0, 1.0)
    FROM search_text CROSS JOIN search_document AS d ON d.entry = search_text.rowid
   WHERE search_text MATCH ? AND d.workspace_id = ?
  UNION ALL
  SELECT 'agent', id, ? FROM agent WHERE workspace_id = ? AND name LIKE ? ESCAPE '\\'
), scored AS (
  SELECT kind, id, CAST(round(sum(relevance) * 1000000) AS INTEGER) AS score
    FROM hits GROUP BY kind, id
)
SELECT kind, id, score FROM scored {after} ORDER BY score DESC, id DESC LIMIT ?
"""

_POSTGRES_TABLES = (("task", "task"), ("message", "message"), ("card", "interaction"))

_POSTGRES = (
    "WITH q AS (SELECT to_tsquery('simple', $2) AS query), hits AS ("
    + " UNION ALL ".join(
        f"SELECT '{kind}' AS kind, r.id, ts_rank(r.search_vector, q.query) AS relevance"
        f" FROM {table} AS r, q WHERE r.workspace_id = $1 AND r.search_vector @@ q.query"
        for kind, table in (*_POSTGRES_TABLES, ("agent", "agent"))
    )
    + " UNION ALL SELECT 'agent', id, $3::real FROM agent WHERE workspace_id = $1 AND name ILIKE $4"
    "), scored AS (SELECT kind, id, CAST(round(sum(relevance) * 1000000) AS BIGINT) AS score"
    " FROM hits GROUP BY kind, id)"
    " SELECT kind, id, score FROM scored {after} ORDER BY score DESC, id DESC LIMIT $5"
)


async def _ranked(
    workspace_id: str, query: str, words: list[str], limit: int, cursor: str | None
) -> list[dict[str, Any]]:
    connection = reading_connection()
    dialect = connection.capabilities.dialect
    key = decode(SEARCH_ORDER, cursor) if cursor else None
    if dialect == "postgres":
        after = "WHERE score < $6 OR (score = $6 AND id < $7)" if key else ""
        tsquery = " & ".join(f"'{word}':*" for word in words)
        values: list[Any] = [workspace_id, tsquery, _NAME_PART[dialect], _like_pattern(query)]
        values.append(limit)
        statement = _POSTGRES.format(after=after)
        if key:
            values += key
    else:
        # Each word quoted: FTS5 reads it as a phrase, never as an operator or a column.
        match = " ".join(f'"{word}"*' for word in words)
        after = "WHERE score < ? OR (score = ? AND id < ?)" if key else ""
        values = [match, workspace_id, _NAME_PART["sqlite"], workspace_id, _like_pattern(query)]
        if key:
            values += [key[0], key[0], key[1]]
        values.append(limit)
        statement = _SQLITE.format(after=after)
    rows: list[dict[str, Any]] = await connection.execute_query_dict(statement, values)
    return rows


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
