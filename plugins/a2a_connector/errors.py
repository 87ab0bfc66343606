"""Errors of the A2A connector, in the hub's one error tree."""

from __future__ import annotations

from hub.core.errors import Unavailable


class RemoteUnreachable(Unavailable):
    """A call to a remote agent failed on the network or with a server error: retry later."""

    status = 502
    code = "remote_unreachable"
    hint = "The remote agent did not answer; the hub retries. Check that it is running."


__all__ = ["RemoteUnreachable"]
