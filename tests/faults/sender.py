"""A raw LAP agent that keeps sending numbered messages through hub restarts.

It pipelines a window of ``message.create`` envelopes, remembers which were acknowledged,
and after any socket loss reconnects with its credential and resends every envelope not
yet acknowledged under the same id: the hub's idempotency turns a resend of a message it
already stored into a ``duplicate`` ack, never a second event. Given ``also_via``, it
connects to each hub in turn, so what one process took in unanswered is resent to another;
``drop`` closes its socket from its side, to make it move on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from dataclasses import dataclass, field

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from tests.plugins.lap_client import lap_url

WINDOW = 32


@dataclass
class Sender:
    hub_url: str
    credential: str
    conversation_id: str
    name: str
    total: int
    acked: dict[str, int] = field(default_factory=dict)  # envelope id → its sequence
    errors: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    also_via: tuple[str, ...] = ()  # further hub processes, connected to in turn
    sent: Counter[str] = field(default_factory=Counter)  # envelope id → times sent
    _socket: ClientConnection | None = None

    def envelope_id(self, n: int) -> str:
        return f"{self.name}-{n:05d}"

    @property
    def done(self) -> bool:
        return len(self.acked) == self.total

    @property
    def resent(self) -> int:
        return sum(times - 1 for times in self.sent.values())

    async def drop(self) -> None:
        """Close the current socket, whatever is in flight on it."""
        if self._socket is not None:
            await self._socket.close()

    async def run(self, give_up_after_s: float) -> None:
        """Send everything, reconnecting as often as needed, for at most the given time."""
        async with asyncio.timeout(give_up_after_s):
            while not self.done:
                with contextlib.suppress(OSError, WebSocketException, TimeoutError):
                    await self._one_connection()
                if not self.done:
                    await asyncio.sleep(0.1)

    async def _one_connection(self) -> None:
        urls = (self.hub_url, *self.also_via)
        async with connect(
            lap_url(urls[self.connections % len(urls)]),
            additional_headers={"Authorization": f"Bearer {self.credential}"},
            proxy=None,
            open_timeout=5,
        ) as socket:
            self._socket = socket
            await socket.send(json.dumps({"id": f"hello-{self.name}", "type": "agent.hello"}))
            while json.loads(await asyncio.wait_for(socket.recv(), 10))["type"] != "agent.welcome":
                pass
            self.connections += 1
            pending = [n for n in range(self.total) if self.envelope_id(n) not in self.acked]
            in_flight: set[str] = set()
            while pending or in_flight:
                while pending and len(in_flight) < WINDOW:
                    n = pending.pop(0)
                    envelope_id = self.envelope_id(n)
                    await socket.send(
                        json.dumps(
                            {
                                "id": envelope_id,
                                "type": "message.create",
                                "conversationId": self.conversation_id,
                                "payload": {"content": f"{self.name} line {n}"},
                            }
                        )
                    )
                    in_flight.add(envelope_id)
                    self.sent[envelope_id] += 1
                frame = json.loads(await asyncio.wait_for(socket.recv(), 10))
                answered = frame.get("payload", {}).get("id")
                if frame["type"] == "ack" and answered in in_flight:
                    in_flight.discard(answered)
                    self.acked[answered] = frame["payload"]["sequence"]
                elif frame["type"] == "error" and answered in in_flight:
                    # Not acknowledged: resent on the next connection, never counted as kept.
                    in_flight.discard(answered)
                    self.errors.append(frame["payload"])
                    pending.append(int(answered.rsplit("-", 1)[1]))
                    await asyncio.sleep(0.05)  # the hub is failing: do not spin
