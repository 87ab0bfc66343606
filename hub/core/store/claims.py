"""Claiming due rows so that, across hub processes, exactly one works on each.

The outbox worker and the policy clock both run in every hub process and take due rows
from one table. A claim locks the rows it reads (``SELECT … FOR UPDATE SKIP LOCKED``: a
second process skips them instead of waiting) and, in the same transaction, writes a lease
on them, so after the commit the rows stay out of other processes' reach until the lease
ends, while this one works on them. A process that dies mid-work loses nothing: its lease
ends and another takes the rows. (SQLite has no row locks; its single writer serialises
the claims instead.)

A lease can also end under a process that is still working, slowly, through a batch. So
the value a claim writes doubles as the claim's token: ``renew`` extends it only while the
row still carries this process's value, and ``update_if_held`` changes the row only then.
Another process that took the row over wrote a later value (it claimed once the first had
passed), so the two can never match by chance.
"""

from __future__ import annotations

from typing import Any, TypeVar

from tortoise.models import Model
from tortoise.queryset import QuerySet

from hub.core.store.transactions import in_transaction

M = TypeVar("M", bound=Model)


async def claim(
    due: QuerySet[M], *, order: tuple[str, ...], limit: int, lease: dict[str, Any]
) -> list[M]:
    """Up to ``limit`` rows of ``due``, in ``order``, that no other process holds, each
    updated with ``lease`` (the field that keeps them out of ``due`` until it ends); the
    rows returned carry the lease as written."""
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
    for row in rows:
        for field, value in lease.items():
            setattr(row, field, value)
    return list(rows)


async def renew(row: M, field: str, value: Any) -> bool:
    """Set ``row``'s lease ``field`` to ``value`` if this process still holds it; False if
    another process has taken the row since (then leave it alone)."""
    held = await update_if_held(row, field, **{field: value})
    if held:
        setattr(row, field, value)
    return held


async def update_if_held(row: M, field: str, **values: Any) -> bool:
    """Write ``values`` to ``row`` if this process still holds its lease ``field``."""
    held = await type(row).filter(pk=row.pk, **{field: getattr(row, field)}).update(**values)
    return bool(held)


__all__ = ["claim", "renew", "update_if_held"]
