"""Paging on the pages: the list's cursor read from the address, and what a bad one means.

A page pages like the API (``hub.core.store.paging``), its cursor in ``?cursor=`` so that
each page has an address to share. It differs in what it refuses: a cursor that no longer
reads (cut short in a pasted link, or from before an upgrade) opens the list at its first
page, and a query parameter the page does not know is ignored. A page has nobody to hand a
400 to, and a person who pasted a link is better served by the list than by an error; a
program, which can act on the error, uses the API, which refuses both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from quart import request

from hub.core.store.paging import BadCursor, Page

Row = TypeVar("Row")  # a table's rows, or a search's hits


async def page_of(fetch: Callable[[str | None], Awaitable[Page[Row]]]) -> tuple[Page[Row], bool]:
    """The page the address asks for, and whether it is past the first."""
    cursor = request.args.get("cursor") or None
    if cursor is None:
        return await fetch(None), False
    try:
        return await fetch(cursor), True
    except BadCursor:
        return await fetch(None), False
