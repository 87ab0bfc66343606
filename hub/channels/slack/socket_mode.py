"""Socket Mode: Slack's events and interactions over a WebSocket the hub opens itself.

For a hub with no public URL (a laptop, behind a firewall). slack-sdk's asyncio client
(``slack_sdk.socket_mode.websockets``, on the ``websockets`` package the hub already uses)
asks ``apps.connections.open`` for the socket's URL with the app-level token, keeps the
socket alive, reconnects when Slack asks (``disconnect``) or the link drops, and hands
each envelope here. Each is acknowledged with its ``envelope_id``: a modal's submission
with its answer, anything else before it is handled, as Slack wants within 3 s. Slack
sends an envelope again when it missed the acknowledgement; a repeat is acknowledged and
otherwise ignored.

``stop`` closes the client and waits — bounded — for every task it started, so nothing is
left running after the hub stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from slack_sdk.socket_mode.response import SocketModeResponse

from hub.channels.slack.inbound import Inbound
from hub.channels.slack.signatures import SeenOnce
from hub.host.deferred_imports import import_off_the_loop

if TYPE_CHECKING:
    from slack_sdk.socket_mode.request import SocketModeRequest
    from slack_sdk.socket_mode.websockets import SocketModeClient

logger = logging.getLogger(__name__)
STOP_WITHIN_S = 5.0


class SocketModeConnection:
    def __init__(
        self, app_token: str, api_url: str, inbound: Inbound, *, ping_interval_s: float = 10.0
    ) -> None:
        self.app_token = app_token
        self.api_url = api_url.rstrip("/") + "/"
        self.inbound = inbound
        self.ping_interval_s = ping_interval_s
        self.client: SocketModeClient | None = None
        self._seen = SeenOnce()
        # The client runs each envelope's listeners in a task of its own it does not keep.
        self._handling: set[asyncio.Task[Any]] = set()

    @property
    def connected(self) -> bool:
        client = self.client
        return client is not None and not client.closed and client.current_session is not None

    async def start(self) -> None:
        if self.client is not None:
            return
        # Built here, not in __init__: the client starts its tasks on the running loop. Its
        # modules bring aiohttp: imported here, and only by a hub that uses Slack.
        await import_off_the_loop("slack_sdk.socket_mode.websockets", "slack_sdk.web.async_client")
        from slack_sdk.socket_mode.websockets import SocketModeClient
        from slack_sdk.web.async_client import AsyncWebClient

        client = SocketModeClient(
            app_token=self.app_token,
            web_client=AsyncWebClient(base_url=self.api_url, timeout=10),
            auto_reconnect_enabled=True,
            ping_interval=self.ping_interval_s,
        )
        client.socket_mode_request_listeners.append(self._on_request)
        try:
            await client.connect()
        except BaseException:
            await _close(client)
            raise
        self.client = client

    async def stop(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await _close(client)
        handling = set(self._handling)
        if handling:
            _done, late = await asyncio.wait(handling, timeout=STOP_WITHIN_S)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=STOP_WITHIN_S)

    async def _on_request(self, client: Any, request: SocketModeRequest) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)
        payload = request.payload
        if not self._seen.first_time(request.envelope_id):
            await _ack(client, request.envelope_id)
            return
        if request.type == "interactive" and self.inbound.answers_at_once(payload):
            answer = await self.inbound.answer(payload)
            await _ack(client, request.envelope_id, answer)
            return
        await _ack(client, request.envelope_id)
        if request.type == "interactive":
            self.inbound.interaction_later(payload)
        elif request.type == "events_api":
            self.inbound.event_later(payload)


async def _ack(client: Any, envelope_id: str, payload: dict[str, Any] | None = None) -> None:
    await client.send_socket_mode_response(SocketModeResponse(envelope_id, payload))


async def _close(client: SocketModeClient) -> None:
    """Close the client and end every task it runs, within ``STOP_WITHIN_S``: its own
    ``close`` only asks them to stop. The tasks go first, so none of them reads the socket
    closing under it as a failure worth a log line."""
    tasks = [
        task
        for task in (
            client.message_receiver,
            client.current_session_monitor,
            client.message_processor,
        )
        if task is not None
    ]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=STOP_WITHIN_S)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.close(), STOP_WITHIN_S)
