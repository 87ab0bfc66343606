"""Writes the events of one group commit can share.

Round trips to the database, not the flush, are what an append costs most (a profile of a
hundred agents writing put over a quarter of the hub's time in socket writes to the
database). Inside a group commit (``hub.core.log.events``), projections therefore:

* ``insert`` rows nothing in the batch reads back (messages, the events themselves): they
  are kept and written with one statement per table when the batch ends;
* do an update every event of the batch would repeat with the same value only ``once``
  (every event of a batch has the same ``recorded_at``, so "the conversation was active at
  T" is one update however many of its messages the batch holds), and a check likewise,
  until an event of the batch changes what it read (``forget``).

Outside a batch (a replay, a test calling a projection directly) both do the plain thing.
If the batch's closing insert meets a unique key, the batch is written again without
sharing, so the failure names the one event it belongs to.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tortoise.fields import CharField, TextField
from tortoise.fields.base import Field
from tortoise.models import Model
from tortoise.validators import MaxLengthValidator

UNNEST_FROM_ROWS = 8  # PostgreSQL: from this many rows, one insert from per-column arrays


class BulkInserts:
    def __init__(self) -> None:
        self._rows: dict[type[Model], list[Model]] = {}
        self._done: set[Hashable] = set()

    def first_time(self, key: Hashable) -> bool:
        if key in self._done:
            return False
        self._done.add(key)
        return True

    def forget(self, key: Hashable) -> None:
        self._done.discard(key)

    def keep(self, row: Model) -> None:
        self._rows.setdefault(type(row), []).append(row)

    async def flush(self, connection: Any) -> None:
        """Insert the kept rows, one statement per table, in the order tables first came."""
        for model, rows in self._rows.items():
            await insert_rows(model, rows, connection)
        self._rows.clear()


async def insert_rows(model: type[Model], rows: list[Model], connection: Any) -> None:
    """``model.bulk_create(rows)`` with the statement written once per table and dialect:
    the ORM builds it anew on every call, which cost more than the insert itself for the
    batch of one that every lone event is. Each value still goes through its field's
    ``to_db_value``, which converts it and checks it (a text too long for its column), or
    a shortcut that does the same for text (see ``_to_db``).

    On PostgreSQL a batch of ``UNNEST_FROM_ROWS`` or more is one insert from arrays, one
    per column: a statement run once per row repeats the executor's start, its triggers'
    queue and its end for every row, and for a group commit of 200 events and their
    messages that took half as long again in the server's CPU (160 against 100 µs per
    event). Below that, planning the arrays costs more than it saves."""
    dialect = connection.capabilities.dialect
    statement = _INSERTS.get((model, dialect))
    if statement is None:
        statement = _INSERTS[model, dialect] = _InsertStatement(model, dialect)
    fields = statement.fields
    if statement.from_arrays is not None and len(rows) >= UNNEST_FROM_ROWS:
        columns = [[to_db(getattr(row, name), row) for row in rows] for name, to_db in fields]
        await connection.execute_query(statement.from_arrays, columns)
        return
    await connection.execute_many(
        statement.sql,
        [[to_db(getattr(row, name), row) for name, to_db in fields] for row in rows],
    )


def _to_db(field: Field[Any]) -> Callable[[Any, Model], Any]:
    """``field.to_db_value``, with a shortcut for text that is text already and fits.

    That is nearly every value of an event's or a message's row, and the ORM's conversion
    and validators cost about a microsecond each, a dozen times per event. Anything else
    (``None``, a number, a text too long) takes the ORM's way, which converts it or raises
    its ``ValidationError``."""
    convert = field.to_db_value
    if type(field) is TextField and not field.validators:
        limit = sys.maxsize
    elif type(field) is CharField and [type(v) for v in field.validators] == [MaxLengthValidator]:
        limit = field.max_length
    else:
        return convert

    def text(value: Any, row: Model) -> Any:
        if type(value) is str and len(value) <= limit:
            return value
        return convert(value, row)

    return text


class _InsertStatement:
    def __init__(self, model: type[Model], dialect: str) -> None:
        meta = model._meta
        generated = {meta.pk_attr} if meta.pk.generated else set()
        names = [name for name in meta.fields_db_projection if name not in generated]
        self.fields = [(name, _to_db(meta.fields_map[name])) for name in names]
        columns = ", ".join(f'"{meta.fields_db_projection[name]}"' for name in names)
        self.from_arrays: str | None = None
        if dialect == "postgres":
            marks = ", ".join(f"${n}" for n in range(1, len(names) + 1))
            # Arrays of the column's type without its length: a cast to varchar(n) would
            # cut a longer text short, where storing it in the column refuses it.
            arrays = ", ".join(
                f"${n}::{_unsized(meta.fields_map[name].get_for_dialect(dialect, 'SQL_TYPE'))}[]"
                for n, name in enumerate(names, start=1)
            )
            self.from_arrays = (
                f'INSERT INTO "{meta.db_table}" ({columns}) SELECT * FROM unnest({arrays})'
            )
        else:
            marks = ", ".join("?" * len(names))
        self.sql = f'INSERT INTO "{meta.db_table}" ({columns}) VALUES ({marks})'


def _unsized(sql_type: str) -> str:
    """``VARCHAR(40)`` → ``VARCHAR``: the type without its length or precision."""
    return sql_type.split("(", 1)[0]


_INSERTS: dict[tuple[type[Model], str], _InsertStatement] = {}

_current: ContextVar[BulkInserts | None] = ContextVar("bulk_inserts", default=None)


@contextmanager
def sharing() -> Iterator[BulkInserts]:
    """Projections applied inside this block share their writes; ``flush`` before commit."""
    writes = BulkInserts()
    token = _current.set(writes)
    try:
        yield writes
    finally:
        _current.reset(token)


async def insert(row: Model, connection: Any) -> None:
    """Insert ``row`` now, or with the batch's other rows of its table when the batch ends."""
    writes = _current.get()
    if writes is None:
        await row.save(using_db=connection, force_create=True)
    else:
        writes.keep(row)


def once(key: Hashable) -> bool:
    """Whether to do the update named ``key`` (always, outside a batch)."""
    writes = _current.get()
    return writes is None or writes.first_time(key)


def forget(key: Hashable) -> None:
    """Make the next ``once(key)`` of this batch true again: what it checked has changed."""
    writes = _current.get()
    if writes is not None:
        writes.forget(key)


__all__ = ["BulkInserts", "forget", "insert", "once", "sharing"]
