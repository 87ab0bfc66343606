"""The socket to the hub: connect, say hello, keep it alive, and connect again when it drops.

``Connection.run`` loops until closed: open ``/lap/v0.1`` (with the credential as a bearer
token, or without one to pair), send ``agent.hello``, pass ``agent.paired`` and
``agent.welcome`` and every later frame to the ``Session``, send heartbeats every
``heartbeatIntervalS`` the hub asked for, and after any loss wait a jittered, growing delay
and start over. It stops for good only when closed or when the hub refuses the agent's
identity (``AuthenticationFailed``): a refused credential does not get better by retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, Protocol

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from hub.protocol.clock import utcnow
from hub.protocol.lap import ENDPOINT_PATH, MAX_FRAME_BYTES, AgentPaired, AgentWelcome
from hub.sdk.backoff import Backoff
from hub.sdk.errors import AuthenticationFailed, HubRefused
from hub.sdk.ids import new_id

logger = logging.getLogger(__name__)

# Close codes and HTTP statuses after which reconnecting cannot help (see hub.core.errors):
# the identity is not welcome, or another adapter now holds this agent's connection (4409,
# ``connection_replaced``: two processes with one credential would take turns forever).
AUTH_CLOSE_CODES = frozenset({4401, 4403, 4409})
AUTH_HTTP_STATUSES = frozenset({401, 403})
# Errors on the hello that are worth retrying; any other means the hello itself is wrong.
RETRYABLE_HELLO_ERRORS = frozenset({"unavailable", "internal_error"})


class Session(Protocol):
    """What the connection asks of and tells the agent it serves."""

    def credential(self) -> str | None: ...

    def hello_payload(self) -> dict[str, Any]: ...

    async def paired(self, paired: AgentPaired) -> None: ...

    async def welcomed(self, welcome: AgentWelcome, connection: Connection) -> None: ...

    async def received(self, frame: dict[str, Any]) -> None: ...

    def disconnected(self) -> None: ...

    def credential_refused(self, error: AuthenticationFailed) -> bool:
        """True if the session can try another way in (a pairing code) after this refusal."""
        ...


def endpoint_url(hub: str) -> str:
    """``ws(s)://host/lap/v0.1`` for a hub at ``http(s)://host``."""
    if hub.startswith("https://"):
        return "wss://" + hub.removeprefix("https://") + ENDPOINT_PATH
    return "ws://" + hub.removeprefix("http://") + ENDPOINT_PATH


class _Retry(Exception):
    """The hub asked us to come back later."""


class Connection:
    def __init__(
        self,
        hub: str,
        session: Session,
        *,
        backoff: Backoff | None = None,
        open_timeout_s: float = 10.0,
        ping_interval_s: float | None = 20.0,
        ping_timeout_s: float | None = 20.0,
    ) -> None:
        self.url = endpoint_url(hub)
        self.session = session
        self.backoff = backoff or Backoff()
        self.open_timeout_s = open_timeout_s
        self.ping_interval_s = ping_interval_s
        self.ping_timeout_s = ping_timeout_s
        self.connects = 0  # sockets that reached agent.welcome, for diagnostics and tests
        self._socket: ClientConnection | None = None
        self._send_lock = asyncio.Lock()
        self._closing = asyncio.Event()

    @property
    def is_open(self) -> bool:
        return self._socket is not None

    async def run(self) -> None:
        """Stay connected until ``close``; raises ``AuthenticationFailed`` if refused."""
        while not self._closing.is_set():
            try:
                await self._connect_once()
            except AuthenticationFailed as refusal:
                if not self.session.credential_refused(refusal):
                    raise
                continue  # the session has another way in: try it at once
            except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed, _Retry) as error:
                logger.info(
                    "no connection to %s: %s (retrying)", self.url, error or type(error).__name__
                )
            finally:
                self._socket = None
                self.session.disconnected()
            if self._closing.is_set():
                break
            delay = self.backoff.next_delay()
            logger.debug("reconnecting in %.2fs", delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), delay)

    async def close(self) -> None:
        self._closing.set()
        socket = self._socket
        if socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), 2.0)

    async def send(self, frame: dict[str, Any]) -> bool:
        """Write one frame; False when there is no open socket (the caller keeps it)."""
        socket = self._socket
        if socket is None:
            return False
        try:
            async with self._send_lock:
                await socket.send(json.dumps(frame))
        except ConnectionClosed:
            return False
        return True

    async def _connect_once(self) -> None:
        credential = self.session.credential()
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        try:
            socket = await connect(
                self.url,
                additional_headers=headers,
                max_size=MAX_FRAME_BYTES,
                open_timeout=self.open_timeout_s,
                ping_interval=self.ping_interval_s,
                ping_timeout=self.ping_timeout_s,
                proxy=None,
                compression=None,
            )
        except InvalidStatus as error:
            if error.response.status_code in AUTH_HTTP_STATUSES:
                raise _refusal_from_body(bytes(error.response.body or b"")) from None
            raise
        heartbeat: asyncio.Task[None] | None = None
        try:
            try:
                hello_id = new_id("evt")
                hello = _envelope(hello_id, "agent.hello", self.session.hello_payload())
                await socket.send(json.dumps(hello))
                async for raw in socket:
                    frame = _parse(raw)
                    if frame is None:
                        continue
                    kind = frame.get("type")
                    payload = frame.get("payload") or {}
                    if kind == "agent.paired":
                        await self.session.paired(AgentPaired.model_validate(payload))
                    elif kind == "agent.welcome":
                        welcome = AgentWelcome.model_validate(payload)
                        self._socket = socket
                        await self.session.welcomed(welcome, self)
                        self.connects += 1
                        self.backoff.reset()
                        if heartbeat is None:
                            heartbeat = asyncio.create_task(
                                self._beat(socket, welcome.heartbeat_interval_s)
                            )
                    elif kind == "error" and payload.get("id") == hello_id:
                        _raise_hello_error(payload)
                    else:
                        await self.session.received(frame)
            except ConnectionClosed:
                if socket.close_code not in AUTH_CLOSE_CODES:
                    raise
            if socket.close_code in AUTH_CLOSE_CODES:
                raise _refusal_from_reason(socket.close_code or 0, socket.close_reason or "")
        finally:
            if heartbeat is not None:
                heartbeat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await heartbeat
            self._socket = None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), 2.0)

    async def _beat(self, socket: ClientConnection, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                async with self._send_lock:
                    await socket.send(json.dumps(_envelope(new_id("hb"), "agent.heartbeat", {})))
            except ConnectionClosed:
                return


def _envelope(envelope_id: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": envelope_id,
        "type": kind,
        "version": "0.1",
        "occurredAt": utcnow().isoformat().replace("+00:00", "Z"),
        "payload": payload,
    }


def _parse(raw: str | bytes) -> dict[str, Any] | None:
    try:
        frame = json.loads(raw)
    except ValueError:
        logger.warning("ignoring a frame that is not JSON: %.200r", raw)
        return None
    if not isinstance(frame, dict):
        logger.warning("ignoring a frame that is not an object: %.200r", raw)
        return None
    return frame


def _raise_hello_error(payload: dict[str, Any]) -> None:
    error = HubRefused.from_frame(payload)
    if error.code in RETRYABLE_HELLO_ERRORS:
        raise _Retry(str(error))
    raise AuthenticationFailed(error.message, code=error.code, hint=error.hint)


def _refusal_from_body(body: bytes | None) -> AuthenticationFailed:
    try:
        data = json.loads(body or b"{}")
        error = data.get("error", data) if isinstance(data, dict) else {}
        return AuthenticationFailed(
            str(error.get("message") or "The hub refused the agent's credential."),
            code=str(error.get("code") or "unauthorized"),
            hint=str(error.get("hint") or "Pair the agent again with a new pairing code."),
        )
    except (ValueError, AttributeError, ValidationError):
        return AuthenticationFailed(
            "The hub refused the agent's credential.",
            code="unauthorized",
            hint="Pair the agent again with a new pairing code.",
        )


def _refusal_from_reason(close_code: int, reason: str) -> AuthenticationFailed:
    try:
        data = json.loads(reason)
    except ValueError:
        data = None
    if isinstance(data, dict) and "code" in data:
        return AuthenticationFailed(
            str(data.get("message") or reason),
            code=str(data["code"]),
            hint=str(data.get("hint") or ""),
        )
    code = {4403: "forbidden", 4409: "connection_replaced"}.get(close_code, "unauthorized")
    return AuthenticationFailed(
        reason or f"The hub closed the connection (code {close_code}).",
        code=code,
        hint="Pair the agent again with a new pairing code.",
    )
