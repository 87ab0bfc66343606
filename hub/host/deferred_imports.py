"""Libraries a hub loads the first time it needs them, on a thread.

Some extras are big to import and used by few hubs, or late: the MCP SDK is a quarter of what
``lineup serve`` imports (0.45 of 1.8 s), and a hub whose agents never come to ``/mcp/`` has
no use for it. Imported at the top of a module they slow every start and hold memory for nothing;
imported inside a handler they stop the event loop, every other socket with it, while they
load. So the first caller awaits the import on a worker thread, and later callers find the
modules in ``sys.modules``.

Two callers at once may both start the import: Python's import lock makes the second wait
for the first. A caller that finds a module another thread is still initialising goes on to
its own ``import`` statement, which waits for it there: a module is never used half made.
"""

from __future__ import annotations

import asyncio
import importlib
import sys


async def import_off_the_loop(*names: str) -> None:
    """Import the modules ``names`` (dotted), on a thread unless they are imported already."""
    missing = [name for name in names if name not in sys.modules]
    if missing:
        await asyncio.to_thread(_import, missing)


def _import(names: list[str]) -> None:
    for name in names:
        importlib.import_module(name)
