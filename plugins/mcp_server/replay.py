"""The recent events of each MCP response stream, so a dropped connection resumes a call.

An asking tool may wait minutes for a person, on one response stream. If the connection
drops meanwhile (a proxy's timeout, a laptop's Wi-Fi), the call goes on in the hub, and a
client that knows the last event it received reconnects with ``Last-Event-ID`` and gets
what it missed, the tool's result included, instead of losing the answer. The streamable
HTTP transport does that when given an event store: it opens each stream with a priming
event (an id, and the ``retry`` delay to reconnect after) and stores every message.

This store keeps the newest events in memory, a bounded number per server (one credential's
agent); a client that comes back after they were dropped calls get_decision instead.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

KEPT_EVENTS = 2000
# How long a client waits before it reconnects a dropped stream (SSE `retry`, milliseconds).
RECONNECT_AFTER_MS = 2000


class RecentEvents(EventStore):
    def __init__(self, kept: int = KEPT_EVENTS) -> None:
        self.kept = kept
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._numbers = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = f"{next(self._numbers)}"
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self.kept:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        known = self._events.get(last_event_id)
        if known is None:
            return None
        stream_id = known[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
