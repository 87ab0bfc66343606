"""Following a workspace's log over ``/ws/client``: every event after a sequence, then live.

``ClientFeed`` keeps the log position (``epoch`` and the last sequence handled) and, when
the socket drops, connects again from that position after a short growing delay, so no
event is missed or repeated. If the hub cannot continue from there
(``system.resync_required``: the log was replaced, or the position is ahead of it), the
feed calls ``on_resync`` so the reader reloads its state, then goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from hub.sdk.backoff import Backoff

logger = logging.getLogger(__name__)

PATH = "/ws/client"
Resync = Callable[[], Awaitable[None]]


class FeedRefused(Exception):
    """The hub refused the socket (a revoked token, no longer a member): not retried."""


class ClientFeed:
    def __init__(
        self,
        hub_url: str,
        token: str,
        workspace_id: str,
        *,
        after: int = 0,
        epoch: str | None = None,
        on_resync: Resync | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.hub_url = hub_url
        self.token = token
        self.workspace_id = workspace_id
        self.last_sequence = after
        self.epoch = epoch
        self.on_resync = on_resync
        self.backoff = backoff or Backoff(initial_s=0.2, maximum_s=10.0)
        self.connects = 0
        self.connected = asyncio.Event()

    def _url(self) -> str:
        query: dict[str, Any] = {"workspace": self.workspace_id, "after": self.last_sequence}
        if self.epoch:
            query["epoch"] = self.epoch
        base = self.hub_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        return f"{base}{PATH}?{urlencode(query)}"

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Logged events in sequence order, each once, reconnecting as needed."""
        while True:
            try:
                async with connect(
                    self._url(),
                    additional_headers={"Authorization": f"Bearer {self.token}"},
                    max_size=None,
                ) as socket:
                    self.connects += 1
                    self.backoff.reset()
                    async for raw in socket:
                        frame = json.loads(raw)
                        kind = frame.get("type")
                        payload = frame.get("payload") or {}
                        if kind == "client.welcome":
                            self.epoch = payload.get("epoch") or self.epoch
                            self.connected.set()
                        elif kind == "system.resync_required":
                            self.epoch = payload.get("epoch") or self.epoch
                            self.last_sequence = int(payload.get("lastSequence") or 0)
                            if self.on_resync is not None:
                                await self.on_resync()
                        elif kind == "error":
                            raise FeedRefused(f"[{payload.get('code')}] {payload.get('message')}")
                        elif isinstance(frame.get("sequence"), int) and frame["sequence"] > 0:
                            if frame["sequence"] <= self.last_sequence:
                                continue  # a replay overlapping what we already had
                            self.last_sequence = frame["sequence"]
                            yield frame
            except InvalidStatus as refused:
                if refused.response.status_code in (401, 403, 404):
                    raise FeedRefused(str(refused)) from None
                logger.info("the client socket was refused (%s); retrying", refused)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as lost:
                logger.info("the client socket dropped (%s); reconnecting", lost)
            self.connected.clear()
            await asyncio.sleep(self.backoff.next_delay())


__all__ = ["ClientFeed", "FeedRefused"]
