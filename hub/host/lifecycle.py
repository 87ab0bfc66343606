"""Telling open sockets the hub is going, before the server stops waiting for them.

On SIGTERM hypercorn stops accepting, then waits up to its grace period for open
connections to end before the app's shutdown code runs. Agent and browser sockets never
end by themselves, so each used to be held for the whole grace and then cut (1011), and
every restart cost its clients that wait. ``lineup serve`` calls ``shutdown_requested``
as soon as the signal comes: each hook (the LAP gateway's) closes its sockets with 1012
(service restart: reconnect with backoff, to this process's successor or another one),
then every reader of the bus, browser sockets included, is told to close the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from quart import Quart

from hub.core.log.bus import DEFAULT_BUS

logger = logging.getLogger(__name__)

SERVICE_RESTART = 1012  # WebSocket close code: the server is restarting, come back soon

_HOOKS = "lineup.shutdown_hooks"


def on_shutdown_requested(app: Quart, hook: Callable[[], Awaitable[None]]) -> None:
    """Run ``hook`` when the hub is asked to stop, before open connections are waited for."""
    app.extensions.setdefault(_HOOKS, []).append(hook)


async def shutdown_requested(app: Quart) -> None:
    for hook in app.extensions.get(_HOOKS, []):
        try:
            await hook()
        except Exception:  # one failing hook must not keep the others' sockets open
            logger.exception("a shutdown hook failed")
    DEFAULT_BUS.close_subscribers()


__all__ = ["SERVICE_RESTART", "on_shutdown_requested", "shutdown_requested"]
