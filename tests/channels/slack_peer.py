"""A local Slack for the channel tests: the Web API, Socket Mode, and people pressing buttons.

One Quart app on a loopback port speaks Slack's wire formats as its documentation shows them:

* the Web API at ``/api/<method>``: JSON or form bodies (GET query strings for the reading
  methods), the token as ``Authorization: Bearer``, answers ``{"ok": true, ...}`` or
  ``{"ok": false, "error": ...}``, and HTTP 429 with ``Retry-After`` when a test asks for
  a rate limit. Blocks are checked against Block Kit's limits, as Slack refuses a message
  that breaks them (``invalid_blocks``);
* Socket Mode: ``apps.connections.open`` (with the app-level token) answers the URL of a
  WebSocket on the same port; it greets with ``hello``, sends envelopes (``envelope_id``,
  ``type``, ``payload``) and takes acknowledgements, whose ``payload`` is a modal's answer;
* people: a direct message to the app (an ``events_api`` envelope, or a signed post to
  ``/slack/events``), a button press (``block_actions``), a modal's submission
  (``view_submission``): over Socket Mode, or posted to the hub's ``/slack/interactivity``
  form-encoded and signed as Slack signs (``v0``, HMAC-SHA256 of ``v0:{ts}:{body}``).

Like the Bot API peer it can be stopped and started again on the same port, to play an
outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from typing import Any

from quart import Quart, request, websocket

from hub.testing import free_port
from tests.channels.peers import _Draining, serve_on_loopback
from tests.channels.slack_people import SIGNING_SECRET, TEAM, Post, SlackPeople
from tests.channels.slack_wire import (
    OpenView,
    SlackMessage,
    block_kit_problem,
    blocks_of,
    dm_channel,
    form_value,
    interactivity_body,
)

BOT_TOKEN = "xoxb-1-lineup-test"
APP_TOKEN = "xapp-1-A1-lineup-test"
BOT_USER = "U0BOT"


class SlackPeer(SlackPeople):
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.url}/api"
        self.messages: dict[tuple[str, str], SlackMessage] = {}
        self.ephemeral: list[dict[str, Any]] = []
        self.views: dict[str, OpenView] = {}
        self.calls: list[tuple[str, float]] = []  # method, when (monotonic)
        self.users: dict[str, dict[str, Any]] = {}
        self.acks: dict[str, dict[str, Any] | None] = {}
        self.refused_blocks: list[str] = []
        self.params: list[tuple[str, dict[str, Any]]] = []  # each call's method and values
        # method → the Retry-After of the 429s answered instead of its next calls.
        self.limits: dict[str, list[int]] = {}
        # method → how many of its next calls take effect but lose their answer (a 502 from a
        # proxy whose upstream connection broke just after Slack acted).
        self.lose_answers: dict[str, int] = {}
        self.post_to_hub: Post | None = None  # set: HTTP mode (signed posts), else Socket Mode
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._triggers: dict[str, float] = {}
        self._trigger_users: dict[str, str] = {}
        self._checkboxes: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        # Envelopes go to the newest socket's queue; with none open they wait in _pending.
        self._current: asyncio.Queue[dict[str, Any]] | None = None
        self._pending: list[dict[str, Any]] = []
        self._socket_tasks: set[asyncio.Task[Any]] = set()
        self._waiting: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self.connections = 0  # Socket Mode connections opened, over the peer's life
        self._shutdown: asyncio.Event | None = None
        self._server: asyncio.Task[None] | None = None
        self._serving = _Draining(self._build())

    # --- the wire -------------------------------------------------------------------------

    def _build(self) -> Quart:
        app = Quart("slack_peer")

        @app.route("/api/<method>", methods=["GET", "POST"])
        async def call(method: str) -> tuple[dict[str, Any], int, dict[str, str]]:
            token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            params: dict[str, Any] = dict(request.args)
            if request.method == "POST":
                if request.is_json:
                    params.update(await request.get_json() or {})
                else:
                    form = await request.form
                    params.update({k: form_value(v) for k, v in form.items()})
            self.calls.append((method, time.monotonic()))
            self.params.append((method, params))
            limited = self.limits.get(method)
            if limited:
                retry_after = limited.pop(0)
                return {"ok": False, "error": "ratelimited"}, 429, {"Retry-After": str(retry_after)}
            expected = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
            if token != expected:
                return {"ok": False, "error": "invalid_auth"}, 200, {}
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            if handler is None:
                return {"ok": False, "error": "unknown_method"}, 200, {}
            try:
                answer = {"ok": True, **await handler(params)}
            except _Refuse as refused:
                return {"ok": False, "error": str(refused)}, 200, {}
            if self.lose_answers.get(method):
                self.lose_answers[method] -= 1
                return {"error": "upstream connection reset"}, 502, {}
            return answer, 200, {}

        @app.websocket("/link/")
        async def link() -> None:
            if not request_ticket_ok(websocket.args.get("ticket", "")):
                return
            await websocket.accept()
            handling = asyncio.current_task()
            if handling is not None:  # ended by stop: hypercorn would leave it to the collector
                self._socket_tasks.add(handling)
                handling.add_done_callback(self._socket_tasks.discard)
            queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            for envelope in self._pending:
                queue.put_nowait(envelope)
            self._pending.clear()
            self._current = queue
            self.connections += 1
            await websocket.send(json.dumps({"type": "hello", "num_connections": 1}))

            async def receive() -> None:
                while True:
                    ack = json.loads(await websocket.receive())
                    waiting = self._waiting.pop(str(ack.get("envelope_id")), None)
                    self.acks[str(ack.get("envelope_id"))] = ack.get("payload")
                    if waiting is not None and not waiting.done():
                        waiting.set_result(ack.get("payload"))

            receiving = asyncio.ensure_future(receive())
            sending: asyncio.Future[dict[str, Any]] | None = None
            try:
                while not receiving.done():
                    sending = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait(
                        {sending, receiving}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if sending in done:
                        await websocket.send(json.dumps(sending.result()))
                        sending = None
            finally:
                # An envelope taken but not sent waits for the next socket, as Slack resends.
                if sending is not None:
                    if sending.done() and not sending.cancelled():
                        self._pending.append(sending.result())
                    sending.cancel()
                receiving.cancel()
                self._forget(queue)

        def request_ticket_ok(ticket: str) -> bool:
            return ticket.startswith("tk-")

        return app

    async def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://lineup-test.slack.com/",
            "team": "LineUp test",
            "user": "lineup",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": "B0LINEUP",
        }

    async def _bots_info(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"bot": {"id": params.get("bot"), "app_id": "A0LINEUP", "name": "lineup"}}

    async def _apps_connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"url": f"ws://127.0.0.1:{self.port}/link/?ticket=tk-{next(self._ids)}"}

    async def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user"))
        known = self.users.get(user)
        if known is None:
            raise _Refuse("user_not_found")
        return {
            "user": {
                "id": user,
                "name": known["name"].lower(),
                "real_name": known["name"],
                "locale": known.get("locale", "en-US"),
                "profile": {"display_name": known["name"], "real_name": known["name"]},
            }
        }

    async def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params["channel"])
        blocks = blocks_of(params.get("blocks"))
        self._check(blocks, params)
        message = SlackMessage(
            channel,
            self._next_ts(),
            str(params.get("text") or ""),
            blocks,
            params.get("metadata"),
            params.get("thread_ts"),
        )
        self.messages[(channel, message.ts)] = message
        return {"channel": channel, "ts": message.ts, "message": self._wire(message)}

    async def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (str(params["channel"]), str(params["ts"]))
        message = self.messages.get(key)
        if message is None:
            raise _Refuse("message_not_found")
        blocks = blocks_of(params.get("blocks"))
        self._check(blocks, params)
        message.history.append(message.blocks)
        message.blocks, message.text = blocks, str(params.get("text") or "")
        return {"channel": message.channel, "ts": message.ts, "text": message.text}

    async def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        self.ephemeral.append(
            {"channel": params["channel"], "user": params["user"], "text": params.get("text")}
        )
        return {"message_ts": self._next_ts()}

    async def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        issued = self._triggers.pop(str(params.get("trigger_id")), None)
        if issued is None or time.monotonic() - issued > 3:
            raise _Refuse("expired_trigger_id")  # a trigger works once, for 3 seconds
        view = params["view"] if isinstance(params["view"], dict) else json.loads(params["view"])
        self._check(view.get("blocks") or [], {"text": "modal"}, modal=True)
        user = self._trigger_users.get(str(params.get("trigger_id")), "")
        opened = OpenView(f"V{next(self._ids):06d}", user, view)
        self.views[opened.id] = opened
        return {"view": {"id": opened.id, **view}}

    async def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params["channel"])
        oldest = float(params.get("oldest") or 0)
        with_metadata = str(params.get("include_all_metadata")).lower() in ("1", "true")
        found = [m for (c, _), m in sorted(self.messages.items(), reverse=True) if c == channel]
        wire = []
        for message in found[: int(params.get("limit") or 100)]:
            if float(message.ts) > oldest:
                item = self._wire(message)
                if with_metadata and message.metadata:
                    item["metadata"] = message.metadata
                wire.append(item)
        return {"messages": wire, "has_more": False}

    def _wire(self, message: SlackMessage) -> dict[str, Any]:
        return {
            "type": "message",
            "user": BOT_USER,
            "bot_id": "B0LINEUP",
            "ts": message.ts,
            "text": message.text,
            "blocks": message.blocks,
        }

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _check(
        self, blocks: list[dict[str, Any]], params: dict[str, Any], modal: bool = False
    ) -> None:
        problem = block_kit_problem(blocks, params, modal=modal)
        if problem:
            self.refused_blocks.append(problem)
            raise _Refuse("invalid_blocks")

    # --- running --------------------------------------------------------------------------

    @property
    def socket_open(self) -> bool:
        return self._current is not None

    def ask_to_reconnect(self) -> None:
        """Slack's ``disconnect`` message: it refreshes its sockets every few hours, and a
        client opens a new one (``apps.connections.open``) before the old one goes."""
        self._send({"type": "disconnect", "reason": "refresh_requested"})

    def _send(self, envelope: dict[str, Any]) -> None:
        if self._current is not None:
            self._current.put_nowait(envelope)
        else:
            self._pending.append(envelope)

    def _forget(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        """A socket closed: what it had not sent waits for the next one."""
        while not queue.empty():
            self._pending.append(queue.get_nowait())
        if self._current is queue:
            self._current = None

    async def start(self) -> None:
        self._shutdown = asyncio.Event()
        self._serving.open()
        self._server = await serve_on_loopback(self._serving, self.port, self._shutdown)

    async def stop(self) -> None:
        if self._shutdown is not None and self._server is not None:
            await self._serving.drain()
            for task in list(self._socket_tasks):  # Slack going away closes its sockets
                task.cancel()
            if self._socket_tasks:
                await asyncio.wait(set(self._socket_tasks), timeout=5)
            self._shutdown.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._server
            self._server = None
        if self._current is not None:
            self._forget(self._current)
        for waiting in self._waiting.values():
            waiting.cancel()
        self._waiting.clear()


class _Refuse(Exception):
    pass


__all__ = [
    "APP_TOKEN",
    "BOT_TOKEN",
    "SIGNING_SECRET",
    "OpenView",
    "SlackMessage",
    "SlackPeer",
    "dm_channel",
    "interactivity_body",
]
