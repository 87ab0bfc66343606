"""Pages of a list by keyset: an opaque cursor holding the last row's sort key and id.

Every list the hub shows a person or a program (tasks, conversations, messages, agents, the
inbox's sections, the audit trail) pages the same way: the next page is the rows that sort
after the last one shown, never "skip the first N". A row added while a client walks the
pages lands before the cursor (the lists sort newest or most urgent first) and moves no row
across a page boundary, so no row is lost or repeated.

The cursor is base64url of ``[list, *sort key, id]`` and a short checksum. It is opaque on
purpose: clients pass it back, and the hub may change what is inside. The checksum is not a
secret: forging a cursor only moves where a list the caller may read anyway starts, so it
is there to turn an edited or truncated cursor into a clear ``400 bad_cursor`` rather than a
page that silently starts somewhere else. The list's name inside refuses a cursor of one
list passed to another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from tortoise.expressions import Q
from tortoise.models import Model
from tortoise.queryset import QuerySet

from hub.core.errors import InvalidInput

Row = TypeVar("Row", bound=Model)
# What a page holds: rows, or hits of a search (``hub.core.work.search``) that sort like them.
Item = TypeVar("Item")

_CHECK_BYTES = 6


class BadCursor(InvalidInput):
    status = 400
    code = "bad_cursor"
    hint = (
        "Pass back the nextCursor of the previous page unchanged, or leave cursor out to "
        "start again at the first page."
    )


@dataclass(frozen=True)
class Order:
    """How a list sorts: its name (bound into its cursors), the fields of its sort key, the
    row's ``id`` last as the tie-break, and whether it runs newest first."""

    name: str
    fields: tuple[str, ...]
    descending: bool = True

    def by(self) -> list[str]:
        sign = "-" if self.descending else ""
        return [f"{sign}{field}" for field in (*self.fields, "id")]


@dataclass(frozen=True)
class Page(Generic[Item]):
    items: list[Item]
    next_cursor: str | None


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(b"lineup-cursor:" + body).digest()[:_CHECK_BYTES]


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"t": value.isoformat()}
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"t"} and isinstance(value["t"], str):
        return datetime.fromisoformat(value["t"])
    if value is None or isinstance(value, str | int | float):
        return value
    raise ValueError("unexpected value")


def encode(order: Order, row: object) -> str:
    key = [_plain(getattr(row, field)) for field in (*order.fields, "id")]
    body = json.dumps([order.name, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(body + _checksum(body)).rstrip(b"=").decode()


def decode(order: Order, cursor: str) -> list[Any]:
    """The sort key and id a cursor of ``order`` holds; ``BadCursor`` for anything else."""
    refused = BadCursor(
        "The cursor is not one this list gave out: it was changed, cut short, or belongs to "
        "another list.",
        parameter="cursor",
    )
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise refused from None
    body, check = raw[:-_CHECK_BYTES], raw[-_CHECK_BYTES:]
    if len(raw) <= _CHECK_BYTES or _checksum(body) != check:
        raise refused
    try:
        decoded = json.loads(body)
        if not isinstance(decoded, list) or decoded[:1] != [order.name]:
            raise ValueError("another list")
        key = [_typed(value) for value in decoded[1:]]
    except ValueError:
        raise refused from None
    if len(key) != len(order.fields) + 1:
        raise refused
    return key


def after(order: Order, cursor: str) -> Q:
    """The rows that sort after the cursor's: for a key ``(a, b, id)`` descending, those with
    ``a < a₀``, or ``a = a₀`` and ``b < b₀``, or both equal and ``id < id₀``."""
    key = decode(order, cursor)
    names = [*order.fields, "id"]
    beyond = "lt" if order.descending else "gt"
    condition: Q | None = None
    for depth, name in enumerate(names):
        equal = {n: v for n, v in zip(names[:depth], key[:depth], strict=True)}
        step = Q(**equal, **{f"{name}__{beyond}": key[depth]})
        condition = step if condition is None else condition | step
    assert condition is not None
    return condition


async def page(
    query: QuerySet[Row],
    order: Order,
    *,
    limit: int,
    cursor: str | None = None,
    down_to: str | None = None,
) -> Page[Row]:
    """One page of ``query`` in ``order``: up to ``limit`` rows after ``cursor``, and the
    cursor of the next page (``None`` on the last). ``down_to`` stops at the row a cursor
    was made from, that row included: a page kept open stays the same page, the rows that
    arrived since at its start, whatever came before it still on the pages after it."""
    if cursor:
        query = query.filter(after(order, cursor))
    if down_to:
        query = query.filter(~after(order, down_to))
    rows = list(await query.order_by(*order.by()).limit(limit + 1))
    return cut(rows, order, limit)


def cut(rows: Sequence[Item], order: Order, limit: int) -> Page[Item]:
    """The first ``limit`` of ``rows`` (already sorted in ``order``, one more fetched than
    shown to learn whether a next page exists) and the cursor after them."""
    shown = list(rows[:limit])
    more = len(rows) > limit and bool(shown)
    return Page(shown, encode(order, shown[-1]) if more else None)


def position(order: Order, cursor: str) -> list[Any]:
    """The sort key a cursor stands at, for what is shown beside a page (a conversation's
    cards beside its messages); ``BadCursor`` as ``decode``."""
    return decode(order, cursor)[:-1]
