"""A small LAP/0.1 server speaking the documented frames, for the SDK's unit tests.

It is not the hub: it keeps a log of downlink events per agent in memory, stores uplinks by
envelope id (a repeat is acked as a duplicate), pairs with fixed codes and can cut every
socket at once. The end-to-end tests run the SDK against the real hub process instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from hub.protocol.clock import utcnow
from hub.testing import free_port


@dataclass
class FakeHub:
    heartbeat_interval_s: float = 0.2
    epoch: str = "epoch-1"
    credentials: dict[str, str] = field(default_factory=dict)  # credential -> agent id
    pairing_codes: set[str] = field(default_factory=set)
    refuse: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # type -> error
    # Ack nothing of these types (as if the hub died before answering).
    swallow: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.sequence = 0
        self.downlinks: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.stored: dict[str, dict[str, Any]] = {}  # uplink envelope id -> envelope
        self.received: list[dict[str, Any]] = []  # every uplink frame, repeats included
        self.hellos: list[dict[str, Any]] = []
        self.sockets: dict[str, set[ServerConnection]] = defaultdict(set)
        self.connections = 0
        self._server: Server | None = None
        self._paired = 0

    async def __aenter__(self) -> FakeHub:
        self._server = await serve(self._serve, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.stored.values() if e["type"] == kind]

    async def push(self, agent_id: str, kind: str, payload: dict[str, Any]) -> int:
        """Append a downlink event for ``agent_id`` and send it to its live sockets."""
        self.sequence += 1
        frame = {
            "id": f"evt_{self.sequence}",
            "type": kind,
            "version": "0.1",
            "occurredAt": utcnow().isoformat(),
            "sequence": self.sequence,
            "payload": payload,
        }
        self.downlinks[agent_id].append(frame)
        for socket in list(self.sockets[agent_id]):
            with contextlib.suppress(ConnectionClosed):
                await socket.send(json.dumps(frame))
        return self.sequence

    def cut(self) -> None:
        """Drop every socket without a close handshake, like a network failure."""
        for sockets in self.sockets.values():
            for socket in list(sockets):
                socket.transport.abort()

    async def _serve(self, socket: ServerConnection) -> None:
        assert socket.request is not None
        header = socket.request.headers.get("Authorization", "")
        credential = header.removeprefix("Bearer ").strip() or None
        agent_id: str | None = None
        if credential is not None:
            agent_id = self.credentials.get(credential)
            if agent_id is None:
                await socket.close(4401, "unknown credential")
                return
        try:
            async for raw in socket:
                frame = json.loads(raw)
                kind, payload = frame["type"], frame.get("payload") or {}
                if kind == "agent.hello":
                    self.hellos.append(payload)
                    if agent_id is None:
                        code = payload.get("pairingCode")
                        if code not in self.pairing_codes:
                            await self._error(socket, frame, "pairing_code_unknown", "no such code")
                            await socket.close(4401, "pairing failed")
                            return
                        self.pairing_codes.discard(code)
                        self._paired += 1
                        agent_id = f"agt_{self._paired}"
                        credential = f"cred-{agent_id}"
                        self.credentials[credential] = agent_id
                        await self._send(
                            socket,
                            "agent.paired",
                            {"agentId": agent_id, "workspaceId": "ws_1", "credential": credential},
                        )
                    await self._welcome(socket, agent_id, payload)
                    continue
                assert agent_id is not None, "uplink before hello"
                self.received.append(frame)
                if kind in ("agent.heartbeat", "message.delta"):
                    continue
                if kind in self.swallow:
                    continue
                if kind in self.refuse:
                    code, message, hint = self.refuse[kind]
                    await self._error(socket, frame, code, message, hint)
                    continue
                duplicate = frame["id"] in self.stored
                self.stored.setdefault(frame["id"], frame)
                await self._send(socket, "ack", {"id": frame["id"], "duplicate": duplicate})
        except ConnectionClosed:
            pass
        finally:
            if agent_id is not None:
                self.sockets[agent_id].discard(socket)

    async def _welcome(
        self, socket: ServerConnection, agent_id: str, hello: dict[str, Any]
    ) -> None:
        self.connections += 1
        await self._send(
            socket,
            "agent.welcome",
            {
                "agentId": agent_id,
                "workspaceId": "ws_1",
                "heartbeatIntervalS": self.heartbeat_interval_s,
                "epoch": self.epoch,
                "lastSequence": self.sequence,
                "status": "online",
            },
        )
        after = hello.get("lastSequence") or 0
        if hello.get("epoch") not in (None, self.epoch):
            await self._send(
                socket, "system.resync_required", {"reason": "epoch", "lastSequence": self.sequence}
            )
        else:
            for frame in self.downlinks[agent_id]:
                if frame["sequence"] > after:
                    await socket.send(json.dumps(frame))
        self.sockets[agent_id].add(socket)

    async def _send(self, socket: ServerConnection, kind: str, payload: dict[str, Any]) -> None:
        await socket.send(
            json.dumps({"id": f"srv_{kind}", "type": kind, "version": "0.1", "payload": payload})
        )

    async def _error(
        self,
        socket: ServerConnection,
        frame: dict[str, Any],
        code: str,
        message: str,
        hint: str = "try again",
    ) -> None:
        await self._send(
            socket, "error", {"id": frame["id"], "code": code, "message": message, "hint": hint}
        )


async def eventually(predicate: Any, within_s: float = 10.0) -> None:
    """Wait until ``predicate()`` is true; fail the test if it never is."""
    async with asyncio.timeout(within_s):
        # Polling: the conditions span processes and sockets, no single event to wait on.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
