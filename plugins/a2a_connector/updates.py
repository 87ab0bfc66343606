"""How the hub learns that a remote task changed: a stream, pushes, or polling.

A remote that streams is followed on its stream (``SubscribeToTask``). One that does not but
whose card offers push notifications is asked to post each change to the hub's webhook
(``CreateTaskPushNotificationConfig``, with the task's token: ``webhook``); each push wakes
the task's runner, which reads the task with ``GetTask`` at once. Between pushes the hub
still reads the task once per *bound* — the longest the polling backoff ever waits
(``LINEUP_A2A_POLL_INTERVAL_S`` doubled six times, at most 30 s) — so a quiet task costs
what the slowest polling costs and no more. When such a read finds a change no push told
of, the pushes have stopped (the remote lost the webhook, or cannot reach the hub): the
call falls back to polling with its usual backoff, and says so in ``updates``, until a
push arrives again. A remote that refuses the webhook is polled from the start.

The mode is kept on the ledger (``RemoteCall.updates``) for the person watching the task:

* ``stream``: the remote streams its changes;
* ``push``: it posts them to the hub's webhook;
* ``poll``: it offers neither (or the hub's pushes are turned off), so the hub polls;
* ``poll-push-silent``: a change came with no push: polling until pushes resume;
* ``poll-push-refused``: the remote refused the webhook: polling.
"""

from __future__ import annotations

from a2a.types.a2a_pb2 import TaskPushNotificationConfig
from a2a.utils.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)

STREAM = "stream"
PUSH = "push"
POLL = "poll"
POLL_PUSH_SILENT = "poll-push-silent"
POLL_PUSH_REFUSED = "poll-push-refused"

MAX_POLL_DELAY_S = 30.0
MAX_POLL_DOUBLINGS = 6  # a quiet task is polled at most 64 times less often than a busy one
# The remote keeps one webhook per task under this id, so registering it again after a
# restart replaces it rather than adding a second.
CONFIG_ID = "lineup-hub"
# How a remote says no to a webhook: it offers no pushes after all, or refuses the address
# (a remote that screens push URLs refuses a hub on a private network).
REFUSALS = (
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    MethodNotFoundError,
    InvalidParamsError,
)


def poll_bound(poll_interval_s: float) -> float:
    """The longest the polling backoff waits between two reads of a quiet task."""
    return min(poll_interval_s * 2**MAX_POLL_DOUBLINGS, MAX_POLL_DELAY_S)


def webhook(remote_task_id: str, url: str, token: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(id=CONFIG_ID, task_id=remote_task_id, url=url, token=token)


class Updates:
    """One call's way of following its remote task, as its runner sees it (a push taken by
    another hub process reaches it through ``push_relay``)."""

    def __init__(self, poll_interval_s: float) -> None:
        self.poll_interval_s = poll_interval_s
        self.bound = poll_bound(poll_interval_s)
        self.mode = ""
        self.registered = False  # this runner asked the remote for pushes (or was refused)
        self._delay = poll_interval_s
        self._unread_pushes = 0
        self._first_read = False

    def pushed(self) -> None:
        self._unread_pushes += 1

    def take_pushes(self) -> bool:
        """Whether a push came since the last call; taken before a read, so that a push
        arriving during the read counts for the next one."""
        pushed, self._unread_pushes = self._unread_pushes > 0, 0
        return pushed

    def registered_as(self, mode: str) -> None:
        self.registered = True
        self.mode = mode
        self._first_read = mode == PUSH

    def after_read(self, *, changed: bool, pushed: bool) -> float:
        """Note what a ``GetTask`` found; returns how long to wait before the next one
        (a push cuts the wait short)."""
        first, self._first_read = self._first_read, False
        if self.mode == POLL_PUSH_SILENT and pushed:
            self.mode = PUSH
        if self.mode == PUSH:
            if changed and not pushed and not first:
                # What changed before the webhook was registered needs no push; after
                # that, a change without one means the pushes stopped.
                self.mode = POLL_PUSH_SILENT
                self._delay = self.poll_interval_s
                return self._delay
            return self.bound
        # Backoff while nothing changes; back to quick polls once something does.
        if changed:
            self._delay = self.poll_interval_s
        else:
            self._delay = min(self._delay * 2, self.bound)
        return self._delay


__all__ = [
    "CONFIG_ID",
    "POLL",
    "POLL_PUSH_REFUSED",
    "POLL_PUSH_SILENT",
    "PUSH",
    "REFUSALS",
    "STREAM",
    "Updates",
    "poll_bound",
    "webhook",
]
