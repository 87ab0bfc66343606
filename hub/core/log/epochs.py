"""Where a returning client resumes the log, and a new epoch when the log fell behind it.

A client keeps the log's ``epoch`` with the last sequence it handled, and hands both back
when it returns (an agent's ``agent.hello``, a browser's ``/ws/client``, the events API).
Sequences of one epoch only ever grow: a cursor of another epoch, or one beyond the log's
end, cannot be continued, and the client is told to resync instead of skipping events.

A cursor beyond the end *in the log's own epoch* means more: the log once held those
sequences and lost them (a backup restored without ``lineup restored``, a disk that lied
about a flush), and the next appends will reuse numbers that clients have seen. This
client is resynced, but others holding the lost sequences may return only once the log
has grown past them, and would then skip the new events silently. So the workspace starts
a new epoch here, at once: every client of the old epoch resyncs when it returns.

It happens once per loss, whichever client reports first and however many report together,
in one process or several: the new epoch is written only where the old one still stands,
one conditional update on the workspace's row (PostgreSQL makes a second writer wait for
the first and re-check the condition, SQLite has one writer at a time). The others find
the epoch already changed and resync to it.

Only a cursor that names the epoch counts: one without an epoch may come from any log (a
client of another hub, one reset by hand) and proves nothing about this one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from hub.core.ids import new_id
from hub.core.store.models import Workspace

logger = logging.getLogger(__name__)

EPOCH_CHANGED = "epoch_changed"
AHEAD_OF_LOG = "ahead_of_log"


@dataclass(frozen=True, slots=True)
class Resumption:
    """Where a client's cursor leads: the workspace as it stands after the check (its epoch
    and ``last_sequence`` are what the client is given), the cursor the client gave, and
    why the client must resync (``epoch_changed`` or ``ahead_of_log``), or ``None``."""

    workspace: Workspace
    after: int
    resync: str | None

    @property
    def replay_after(self) -> int:
        """The sequence after which the client is sent the log: its own cursor, or after a
        resync the log's end (the client reloads its state, then follows from there)."""
        return int(self.workspace.last_sequence) if self.resync else self.after


async def resume(workspace: Workspace, epoch: str | None, after: int, *, client: str) -> Resumption:
    """Check a returning client's cursor (``epoch`` and the last sequence it handled) against
    ``workspace``; starts a new epoch when the cursor proves the log lost acknowledged events.

    ``client`` names the client in the operator's warning (``agent agt_...``, ``user
    usr_...``).
    """
    if epoch and epoch != workspace.epoch:
        return Resumption(workspace, after, EPOCH_CHANGED)
    if after <= int(workspace.last_sequence):
        return Resumption(workspace, after, None)
    if epoch:
        workspace = await _start_new_epoch(workspace, after, client=client)
    return Resumption(workspace, after, AHEAD_OF_LOG)


async def _start_new_epoch(workspace: Workspace, seen: int, *, client: str) -> Workspace:
    fresh_epoch = new_id("event")
    # Only where the old epoch still stands: a second report, here or in another process,
    # changes nothing. The log's end is not re-checked: it was behind the cursor when read,
    # and appends since then have only reused more of the numbers the client saw.
    changed = await Workspace.filter(id=workspace.id, epoch=workspace.epoch).update(
        epoch=fresh_epoch
    )
    if changed:
        logger.warning(
            "workspace %s: %s has seen sequence %s of epoch %s, but the log ends at %s: "
            "the log lost events it had acknowledged (a restored backup, or commits a "
            "crash took from the disk). Started epoch %s: every client resyncs.",
            workspace.id,
            client,
            seen,
            workspace.epoch,
            workspace.last_sequence,
            fresh_epoch,
        )
    return await Workspace.get(id=workspace.id)


__all__ = ["AHEAD_OF_LOG", "EPOCH_CHANGED", "Resumption", "resume"]
