"""How much one WebSocket can make the hub hold: a short inbox, and frames of bounded size.

Quart moves each message hypercorn has read into a queue of the socket's own, where the
handler takes it. Unbounded, that queue keeps every frame of a client that sends faster
than its handler answers: one that never reads the answers, so that the handler waits on
its send, grows the hub by whatever it sends. ``BoundedWebsocketConnection`` holds at most
``INBOX_FRAMES``; once full, Quart stops taking messages from hypercorn, hypercorn's own
queue (``max_app_queue_size``, 10) fills, hypercorn stops reading the TCP socket, and the
client's sends block. The handler's pace becomes the client's.

A frame is at most ``MAX_FRAME_BYTES`` characters (hypercorn counts a text frame in
characters): every socket of the hub speaks LAP envelopes, which are refused past that many
bytes, and a character is at least one byte, so a longer frame could only be refused. A
frame that runs past it is not read to its end: hypercorn closes the socket with 1009
(message too big), here with the reason ``{"code":"frame_too_large"}`` the protocol's other
closes give. One socket of a client that floods therefore holds about
``(10 + INBOX_FRAMES + 2) × MAX_FRAME_BYTES`` characters of input at most.

Hypercorn's queue was only ever full for an app that had stopped reading, so it hands over
a disconnect, and goes on reading after the app has ended, as if it never were; with the
inbox bounded it often is, and ``BoundedWSStream`` keeps either from waiting forever.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypercorn.config import Config
from hypercorn.protocol import h2, h11
from hypercorn.protocol.events import StreamClosed
from hypercorn.protocol.ws_stream import WSStream
from quart import Quart
from quart.asgi import ASGIWebsocketConnection
from wsproto.events import CloseConnection
from wsproto.frame_protocol import CloseReason

from hub.protocol.lap import MAX_FRAME_BYTES

# Messages read and not yet taken by the handler. Hypercorn's own queue in front of this one
# already keeps a handler fed between two reads; one more is enough.
INBOX_FRAMES = 1

FRAME_TOO_LARGE_REASON = json.dumps({"code": "frame_too_large"}, separators=(",", ":"))


class BoundedWebsocketConnection(ASGIWebsocketConnection):
    """Quart's WebSocket connection with an inbox of ``INBOX_FRAMES`` messages."""

    def __init__(self, app: Quart, scope: Any) -> None:
        super().__init__(app, scope)
        self.queue = asyncio.Queue(maxsize=INBOX_FRAMES)


class BoundedWSStream(WSStream):
    """Hypercorn's WebSocket stream, made safe for an app that reads at its own pace.

    Hypercorn hands messages to the app through a queue of 10 and waits while it is full:
    that wait is the backpressure. It hands over the peer's disconnect through the same
    queue, though, and may do so from inside the app's own send (a write that finds the peer
    gone), which then waits for the app to read: forever, when the app is in that very send.
    And once the app has ended nobody reads, so hypercorn's reader waits forever on its next
    message, holding the connection. So the disconnect makes room for itself by dropping the
    newest message not yet read (its sender is gone and never saw it answered; LAP adapters
    and browsers resend what went unanswered, as after any lost connection), and once the
    stream is closed or the app has ended, what still arrives is dropped, not queued.

    Its too-big close also says why: hypercorn closes with 1009 and no reason.
    """

    async def handle(self, event: Any) -> None:
        if isinstance(event, StreamClosed) and not self.closed:
            self._make_room()
        await super().handle(event)
        if self.closed:
            self._stop_queueing()

    async def app_send(self, message: Any) -> None:
        await super().app_send(message)
        if message is None:  # the app has ended: nothing reads its queue any more
            queue = self._stop_queueing()
            while queue is not None and not queue.empty():
                queue.get_nowait()  # wakes a reader waiting to queue, which then goes on

    async def _send_wsproto_event(self, event: Any) -> None:
        if (
            isinstance(event, CloseConnection)
            and event.code == CloseReason.MESSAGE_TOO_BIG
            and not event.reason
        ):
            event = CloseConnection(code=event.code, reason=FRAME_TOO_LARGE_REASON)
        await super()._send_wsproto_event(event)

    def _app_queue(self) -> asyncio.Queue[Any] | None:
        # Hypercorn's asyncio worker hands the stream its app queue's bound ``put``.
        queue = getattr(self.app_put, "__self__", None)
        return queue if isinstance(queue, asyncio.Queue) else None

    def _make_room(self) -> None:
        queue = self._app_queue()
        if queue is not None and queue.full():
            held = [queue.get_nowait() for _ in range(queue.qsize())]
            for message in held[:-1]:
                queue.put_nowait(message)

    def _stop_queueing(self) -> asyncio.Queue[Any] | None:
        queue = self._app_queue()
        if queue is not None:
            self.app_put = _dropped
        return queue


async def _dropped(message: Any) -> None:
    return None


def init_app(app: Quart) -> None:
    app.asgi_websocket_class = BoundedWebsocketConnection


def limit_websocket_frames(config: Config) -> None:
    """Make hypercorn refuse frames over ``MAX_FRAME_BYTES`` characters, and build its
    WebSocket streams as ``BoundedWSStream``.

    Hypercorn has no setting for either: its HTTP/1.1 and HTTP/2 protocols build
    ``WSStream`` by name, so that name is pointed at the subclass.
    """
    config.websocket_max_message_size = MAX_FRAME_BYTES
    h11.WSStream = BoundedWSStream  # type: ignore[attr-defined]
    h2.WSStream = BoundedWSStream  # type: ignore[attr-defined]


__all__ = [
    "FRAME_TOO_LARGE_REASON",
    "INBOX_FRAMES",
    "BoundedWSStream",
    "BoundedWebsocketConnection",
    "init_app",
    "limit_websocket_frames",
]
