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
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from quart import Quart, request, websocket

from hub.testing import free_port
from tests.channels.peers import _Draining, serve_on_loopback

BOT_TOKEN = "xoxb-1-lineup-test"
APP_TOKEN = "xapp-1-A1-lineup-test"
SIGNING_SECRET = "8f742231b10e8888abcd99111222a5a5"  # 32 hex digits, as Slack makes them
TEAM = "T0LINEUP"
BOT_USER = "U0BOT"
# Post = how a signed request reaches the hub in HTTP mode: (path, body, headers) → (status,
# body as text).
Post = Callable[[str, bytes, dict[str, str]], Awaitable[tuple[int, str]]]


@dataclass
class SlackMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    metadata: dict[str, Any] | None = None
    thread_ts: str | None = None
    history: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def all_text(self) -> str:
        """Every text the message shows, one per line."""
        return "\n".join(_texts(self.blocks))

    def controls(self) -> list[dict[str, Any]]:
        return [e for b in self.blocks if b.get("type") == "actions" for e in b["elements"]]

    def buttons(self) -> list[str]:
        return [e["text"]["text"] for e in self.controls() if e["type"] == "button"]

    def control(self, label: str) -> dict[str, Any]:
        for element in self.controls():
            text = (element.get("text") or {}).get("text", "")
            if element["type"] == "button" and label in text:
                return element
            if element["type"] == "checkboxes" and label == "checkboxes":
                return element
        raise AssertionError(f"no control {label!r} in {self.buttons()}")


@dataclass
class OpenView:
    id: str
    user: str
    view: dict[str, Any]
    closed: bool = False


class SlackPeer:
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
                    params.update({k: _value(v) for k, v in form.items()})
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
        blocks = _blocks(params.get("blocks"))
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
        blocks = _blocks(params.get("blocks"))
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
        problem = _block_kit_problem(blocks, params, modal=modal)
        if problem:
            self.refused_blocks.append(problem)
            raise _Refuse("invalid_blocks")

    # --- acting as people in Slack --------------------------------------------------------

    def person(self, user: str, name: str, locale: str = "en-US") -> str:
        """A person in the Slack workspace; returns their direct conversation with the app."""
        self.users[user] = {"name": name, "locale": locale}
        return dm_channel(user)

    def conversation(self, channel: str) -> list[SlackMessage]:
        return [m for (c, _), m in sorted(self.messages.items()) if c == channel]

    def called(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.params if name == method]

    def told(self, user: str) -> list[str]:
        """The ephemeral messages ``user`` was shown."""
        return [str(e["text"]) for e in self.ephemeral if e["user"] == user]

    async def send_dm(self, user: str, text: str) -> None:
        channel = dm_channel(user)
        event = {
            "type": "message",
            "channel": channel,
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": self._next_ts(),
            "team": TEAM,
        }
        envelope = {
            "type": "event_callback",
            "team_id": TEAM,
            "api_app_id": "A0LINEUP",
            "event": event,
            "event_id": f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
        }
        if self.post_to_hub is not None:
            await self._post("/slack/events", json.dumps(envelope).encode(), "application/json")
        else:
            await self._envelope("events_api", envelope)

    async def press(
        self, user: str, message: SlackMessage, label: str, *, ticks: list[str] | None = None
    ) -> dict[str, Any] | None:
        """``user`` presses the button labelled ``label`` (or, with ``ticks``, sets the
        checkboxes to those option labels) on ``message``."""
        return await self.interact(self.press_payload(user, message, label, ticks=ticks))

    def press_payload(
        self, user: str, message: SlackMessage, label: str, *, ticks: list[str] | None = None
    ) -> dict[str, Any]:
        """The ``block_actions`` payload Slack sends for that press."""
        control = message.control("checkboxes" if ticks is not None else label)
        action: dict[str, Any] = {
            "action_id": control["action_id"],
            "block_id": "b",
            "type": control["type"],
            "action_ts": self._next_ts(),
        }
        key = (message.channel, message.ts, user)
        if ticks is not None:
            chosen = [o for o in control["options"] if o["text"]["text"] in ticks]
            self._checkboxes[key] = chosen
            action["selected_options"] = chosen
        else:
            action["text"] = control["text"]
            action["value"] = control.get("value", "")
        state = {"values": {}}
        for block in message.blocks:
            for element in block.get("elements") or []:
                if element.get("type") == "checkboxes":
                    chosen = self._checkboxes.get(key, element.get("initial_options") or [])
                    state["values"][block.get("block_id", "b")] = {
                        element["action_id"]: {"type": "checkboxes", "selected_options": chosen}
                    }
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "A0LINEUP",
            "token": "legacy-verification-token",
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
            },
            "trigger_id": self._trigger(user),
            "team": {"id": TEAM, "domain": "lineup-test"},
            "channel": {"id": message.channel, "name": "directmessage"},
            "message": self._wire(message),
            "state": state,
            "response_url": f"{self.url}/actions/{next(self._ids)}",
            "actions": [action],
        }
        return payload

    async def submit(
        self, user: str, view: OpenView, values: dict[str, str]
    ) -> dict[str, Any] | None:
        """``user`` submits the modal with ``values`` (block id → typed text); returns the
        hub's answer, and keeps the modal as the answer leaves it."""
        state = {
            block: {"text": {"type": "plain_text_input", "value": text}}
            for block, text in values.items()
        }
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "lineup-test"},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "A0LINEUP",
            "trigger_id": self._trigger(user),
            "view": {
                **view.view,
                "id": view.id,
                "state": {"values": state},
                "hash": f"h{next(self._ids)}",
            },
        }
        answer = await self.interact(payload)
        if answer and answer.get("response_action") == "update":
            view.view = answer["view"]
        elif not answer or answer.get("response_action") in ("clear", None):
            view.closed = True
        return answer

    def open_view(self, user: str) -> OpenView | None:
        """The modal ``user`` has open (the newest), if any."""
        opened = [v for v in self.views.values() if v.user == user and not v.closed]
        return opened[-1] if opened else None

    async def interact(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Deliver an interaction payload as Slack would; returns the hub's answer to it."""
        if self.post_to_hub is not None:
            body = interactivity_body(payload)
            status, text = await self._post(
                "/slack/interactivity", body, "application/x-www-form-urlencoded"
            )
            assert status == 200, (status, text)
            return json.loads(text) if text.strip() else None
        return await self._envelope("interactive", payload)

    def _trigger(self, user: str) -> str:
        trigger = (
            f"{next(self._ids)}.{int(time.time())}.{hashlib.sha1(user.encode()).hexdigest()[:12]}"
        )
        self._triggers[trigger] = time.monotonic()
        self._trigger_users[trigger] = user
        return trigger

    async def _envelope(
        self, kind: str, payload: dict[str, Any], within: float = 10.0
    ) -> dict[str, Any] | None:
        envelope_id = f"env-{next(self._ids)}"
        waiting: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._waiting[envelope_id] = waiting
        self._send(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind == "interactive",
            }
        )
        return await asyncio.wait_for(waiting, within)

    # --- HTTP mode: Slack's signed posts -------------------------------------------------

    def sign(
        self, body: bytes, timestamp: int | None = None, secret: str = SIGNING_SECRET
    ) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        base = b"v0:" + ts.encode() + b":" + body
        digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}

    async def _post(self, path: str, body: bytes, content_type: str) -> tuple[int, str]:
        assert self.post_to_hub is not None
        headers = {"Content-Type": content_type, **self.sign(body)}
        return await self.post_to_hub(path, body, headers)

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


def interactivity_body(payload: dict[str, Any]) -> bytes:
    """How Slack posts an interaction: form-encoded, the JSON as ``payload``."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def dm_channel(user: str) -> str:
    return "D" + user.removeprefix("U")


class _Refuse(Exception):
    pass


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _blocks(raw: Any) -> list[dict[str, Any]]:
    if raw in (None, ""):
        return []
    return json.loads(raw) if isinstance(raw, str) else list(raw)


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for block in blocks:
        for key in ("text",):
            if isinstance(block.get(key), dict):
                found.append(block[key]["text"])
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("type") in ("plain_text", "mrkdwn"):
                found.append(element["text"])
    return found


def _block_kit_problem(
    blocks: list[dict[str, Any]], params: dict[str, Any], *, modal: bool
) -> str | None:
    """What Slack would refuse in these blocks (the limits of its Block Kit reference)."""
    if not blocks and not params.get("text"):
        return "no text and no blocks"
    if len(blocks) > (100 if modal else 50):
        return f"{len(blocks)} blocks"
    action_ids: set[str] = set()
    for block in blocks:
        kind = block.get("type")
        text = block.get("text")
        if kind == "header" and (text["type"] != "plain_text" or len(text["text"]) > 150):
            return "header"
        if isinstance(text, dict) and len(text.get("text", "")) > 3000:
            return f"{kind} text over 3000"
        if isinstance(text, dict) and not text.get("text"):
            return f"{kind} with empty text"
        for element in block.get("elements") or []:
            if kind == "context":
                if len(block["elements"]) > 10:
                    return "context over 10 elements"
                continue
            if kind == "actions" and len(block["elements"]) > 25:
                return "actions over 25 elements"
            action_id = element.get("action_id", "")
            if not action_id or len(action_id) > 255 or action_id in action_ids:
                return f"action_id {action_id!r}"
            action_ids.add(action_id)
            if element.get("type") == "button":
                label = element["text"]
                if label["type"] != "plain_text" or not 0 < len(label["text"]) <= 75:
                    return f"button {label!r}"
                if len(element.get("value", "")) > 2000 or len(element.get("url", "")) > 3000:
                    return "button value or url"
            if element.get("type") == "checkboxes":
                if not 0 < len(element["options"]) <= 10:
                    return "checkboxes"
                if any(len(o["text"]["text"]) > 75 for o in element["options"]):
                    return "checkbox text"
    return None
