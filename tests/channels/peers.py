"""Real local peers for the channel tests: an SMTP server and a Telegram Bot API server.

Both listen on loopback ports and can be stopped and started again on the same port, to
play an outage. The Bot API server speaks Telegram's wire format (form-encoded bodies whose
values are JSON, ``{"ok": true, "result": ...}`` answers) for the calls python-telegram-bot
makes, and lets a test act as a Telegram user: press a button, send or reply with text.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP
from hypercorn.asyncio import serve
from hypercorn.config import Config
from quart import Quart, request

from hub.testing import free_port


class SmtpPeer:
    """aiosmtpd on a fixed loopback port (taken from a socket bound to port 0 first:
    ``Controller(port=0)`` would try to connect to port 0 to check itself).

    ``delay_s`` plays a slow relay: each message is answered that long after its data
    arrived (sessions wait side by side, as on a real server)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.port = free_port()
        self.delay_s = delay_s
        self.messages: list[EmailMessage] = []
        self.sessions_cut = 0
        self._lock = threading.Lock()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = BytesParser(policy=policy.default).parsebytes(envelope.original_content)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        with self._lock:
            self.messages.append(message)  # type: ignore[arg-type]
        return "250 OK"

    def start(self) -> None:
        self._controller = _ClosingController(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self.sessions_cut += self._controller.cut
            self._controller = None

    def to(self, address: str) -> list[EmailMessage]:
        with self._lock:
            return [m for m in self.messages if address in str(m["To"])]


class _ClosingController(Controller):
    """A Controller whose stop also closes the connections still open.

    aiosmtpd's own stop closes only the listening socket; on Python 3.11 a session open at
    that moment (the hub in the middle of sending) keeps its socket until it is collected,
    which warns as an unclosed socket."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sessions: weakref.WeakSet[SMTP] = weakref.WeakSet()
        self.cut = 0  # sessions aborted by stop: each may lose one "250" the client waits for

    def factory(self) -> SMTP:
        session = super().factory()
        self._sessions.add(session)
        return session

    def stop(self, no_assert: bool = False) -> None:
        async def close_sessions() -> None:
            for session in list(self._sessions):
                if session.transport is not None:
                    session.transport.abort()
                    self.cut += 1
            await asyncio.sleep(0)  # lets each transport's connection_lost close its socket

        if self._thread is not None:
            asyncio.run_coroutine_threadsafe(close_sessions(), self.loop).result(timeout=5)
        super().stop(no_assert)


@dataclass
class SentMessage:
    chat_id: int
    message_id: int
    text: str
    reply_markup: dict[str, Any] | None
    history: list[str] = field(default_factory=list)

    def buttons(self) -> list[dict[str, Any]]:
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [button for row in rows for button in row]

    def button(self, starts_with: str) -> dict[str, Any]:
        for button in self.buttons():
            if starts_with in button["text"]:
                return button
        raise AssertionError(f"no button {starts_with!r} in {self.buttons()}")


class BotApiPeer:
    """A local Telegram Bot API server."""

    def __init__(self, token: str = "123456:TEST-token") -> None:
        self.token = token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.messages: dict[tuple[int, int], SentMessage] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        # The message each reply the bot sent answers: reply → replied-to message id.
        self.replies: dict[int, int] = {}
        self.calls: list[str] = []
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(100)
        self._query_ids = itertools.count(1)
        self._new_update = asyncio.Event()
        self._shutdown: asyncio.Event | None = None
        self._server: asyncio.Task[None] | None = None
        self._serving = _Draining(self._build())
        self.webhook: dict[str, Any] | None = None
        # Set to post updates to a webhook instead of queueing them for getUpdates.
        self.push_to: Callable[[dict[str, Any]], Awaitable[Any]] | None = None
        self._pushing: list[asyncio.Task[Any]] = []

    # --- the wire -------------------------------------------------------------------------

    def _build(self) -> Quart:
        app = Quart("bot_api_peer")

        @app.post("/bot<token>/<method>")
        async def call(token: str, method: str) -> tuple[dict[str, Any], int]:
            # As the real Bot API: an error's HTTP status is its error_code (python-telegram-bot
            # reads the status; a 200 carrying "ok": false would look like a broken answer).
            if token != self.token:
                return {"ok": False, "error_code": 401, "description": "Unauthorized"}, 401
            form = await request.form
            params = {key: _value(value) for key, value in form.items()}
            if not params and request.is_json:
                params = await request.get_json()
            self.calls.append(method)
            handler = getattr(self, f"_{method}", None)
            if handler is None:
                return {"ok": False, "error_code": 404, "description": f"no {method}"}, 404
            try:
                return {"ok": True, "result": await handler(params)}, 200
            except _Refuse as refused:
                return {"ok": False, "error_code": 400, "description": str(refused)}, 400

        return app

    async def _getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": 999,
            "is_bot": True,
            "first_name": "LineUp",
            "username": "lineup_test_bot",
            "can_join_groups": False,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _deleteWebhook(self, params: dict[str, Any]) -> bool:
        return True

    async def _getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        self._updates = [u for u in self._updates if u["update_id"] >= offset]
        if not self._updates and timeout:
            self._new_update.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_update.wait(), timeout=min(timeout, 1.0))
        return list(self._updates)

    async def _sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        message = SentMessage(
            chat_id, next(self._message_ids), str(params["text"]), params.get("reply_markup")
        )
        self.messages[(chat_id, message.message_id)] = message
        replied = (params.get("reply_parameters") or {}).get("message_id") or params.get(
            "reply_to_message_id"
        )
        if replied:
            self.replies[message.message_id] = int(replied)
        return self._wire(message)

    async def _editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._find(params)
        if message.text == params["text"] and message.reply_markup == params.get("reply_markup"):
            raise _Refuse("Bad Request: message is not modified")
        message.history.append(message.text)
        message.text = str(params["text"])
        message.reply_markup = params.get("reply_markup")
        return self._wire(message)

    async def _editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._find(params)
        message.reply_markup = params.get("reply_markup")
        return self._wire(message)

    async def _answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        self.answers[str(params["callback_query_id"])] = params
        return True

    async def _deleteMessage(self, params: dict[str, Any]) -> bool:
        return True

    def _find(self, params: dict[str, Any]) -> SentMessage:
        key = (int(params["chat_id"]), int(params["message_id"]))
        if key not in self.messages:
            raise _Refuse("Bad Request: message to edit not found")
        return self.messages[key]

    def _wire(self, message: SentMessage) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "message_id": message.message_id,
            "date": int(time.time()),
            "chat": {"id": message.chat_id, "type": "private"},
            "from": {"id": 999, "is_bot": True, "first_name": "LineUp"},
            "text": message.text,
        }
        if message.reply_markup and "inline_keyboard" in message.reply_markup:
            wire["reply_markup"] = message.reply_markup
        return wire

    # --- acting as a Telegram user --------------------------------------------------------

    def _push(self, update: dict[str, Any]) -> None:
        update["update_id"] = next(self._update_ids)
        if self.push_to is not None:  # webhook mode: Telegram posts each update to the bot
            self._pushing.append(asyncio.create_task(self.push_to(update)))
            return
        self._updates.append(update)
        self._new_update.set()

    async def _setWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = params
        return True

    @staticmethod
    def user(user_id: int, name: str = "Ada", language: str = "en") -> dict[str, Any]:
        return {"id": user_id, "is_bot": False, "first_name": name, "language_code": language}

    def send_text(
        self, user_id: int, text: str, *, reply_to: int | None = None, name: str = "Ada"
    ) -> int:
        message_id = next(self._message_ids)
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": user_id, "type": "private"},
            "from": self.user(user_id, name),
            "text": text,
        }
        if text.startswith("/"):
            command = text.split()[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        if reply_to is not None:
            replied = self.messages[(user_id, reply_to)]
            message["reply_to_message"] = self._wire(replied)
        self._push({"message": message})
        return message_id

    def press(self, user_id: int, message: SentMessage, data: str) -> str:
        query_id = f"q{next(self._query_ids)}"
        self._push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": self.user(user_id),
                    "chat_instance": "ci",
                    "data": data,
                    "message": self._wire(message),
                }
            }
        )
        return query_id

    def chat(self, chat_id: int) -> list[SentMessage]:
        return [m for (chat, _), m in sorted(self.messages.items()) if chat == chat_id]

    # --- running --------------------------------------------------------------------------

    async def start(self) -> None:
        self._shutdown = asyncio.Event()
        self._serving.open()
        self._server = await serve_on_loopback(self._serving, self.port, self._shutdown)

    async def stop(self) -> None:
        if self._shutdown is not None and self._server is not None:
            self._new_update.set()  # a long poll answers now
            await self._serving.drain()
            self._shutdown.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._server
            self._server = None


async def serve_on_loopback(app: Quart, port: int, shutdown: asyncio.Event) -> asyncio.Task[None]:
    """Serve ``app`` with hypercorn on 127.0.0.1:``port`` until ``shutdown`` is set."""
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.graceful_timeout = 0.5
    config.accesslog = None
    server = asyncio.create_task(serve(app, config, shutdown_trigger=shutdown.wait))  # type: ignore[arg-type]
    for _ in range(500):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            await writer.wait_closed()
            return server
        except OSError:
            await asyncio.sleep(0.01)
    raise RuntimeError(f"nothing answered on port {port}")


class _Draining:
    """The Bot API app as served, so that a stop loses no answer.

    A stop first refuses new calls, unrecorded, then waits until every call already taken in
    has been answered, and only then closes the server. Closing at once would race: hypercorn
    closes idle keep-alive connections as it ends, and a request arriving on one just then
    could be recorded with its answer lost. The hub would rightly send it again, a repeat no
    client can avoid (the Bot API has no idempotency key); an outage test is about the hub's
    retries, not that race."""

    def __init__(self, app: Quart) -> None:
        self.app = app
        self._refusing = False
        self._open_calls = 0
        self._answered = asyncio.Event()
        self._answered.set()

    def open(self) -> None:
        self._refusing = False

    async def drain(self) -> None:
        self._refusing = True
        await self._answered.wait()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._refusing:  # as a proxy in front of a stopped Bot API answers
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b"Bad Gateway"})
            return
        self._open_calls += 1
        self._answered.clear()
        try:
            await self.app(scope, receive, send)  # returns once the answer is written
        finally:
            self._open_calls -= 1
            if not self._open_calls:
                self._answered.set()


class _Refuse(Exception):
    pass


def _value(raw: str) -> Any:
    """PTB sends each parameter form-encoded, with non-strings as JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw
