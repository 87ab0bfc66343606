"""Claiming due rows so that, across hub processes, exactly one works on each.

The outbox worker and the policy clock both run in every hub process and take due rows
from one table. A claim locks the rows it reads (``SELECT … FOR UPDATE SKIP LOCKED``: a
second process skips them instead of waiting) and, in the same transaction, writes a lease
on them, so after the commit the rows stay out of other processes' reach until the lease
ends, while this one works on them. A process that dies mid-work loses nothing: its lease
ends and another takes the rows. (SQLite has no row locks; its single writer serialises
the claims instead.)
"""

from __future__ import annotations

from typing import Any, TypeVar

from tortoise.models import Model
from tortoise.queryset import QuerySet
from tortoise.transactions import in_transaction

M = TypeVar("M", bound=Model)


async def claim(
    due: QuerySet[M], *, order: tuple[str, ...], limit: int, lease: dict[str, Any]
) -> list[M]:
    """Up to ``limit`` rows of ``due``, in ``order``, that no other process holds, each
    updated with ``lease`` (the field that keeps them out of ``due`` until it ends)."""
    async with in_transaction() as connection:
        rows = (
            await due.using_db(connection)
            .order_by(*order)
            .limit(limit)
            .select_for_update(skip_locked=True)
        )
        if rows:
            model = type(rows[0])
            await model.filter(pk__in=[row.pk for row in rows]).using_db(connection).update(**lease)
    return list(rows)


__all__ = ["claim"]
