"""A local Feishu open platform for the channel tests, on a loopback port.

It speaks the wire formats lark-oapi speaks, so the hub's official clients run unchanged
against it:

* ``POST /open-apis/auth/v3/tenant_access_token/internal`` — the app's credentials give a
  tenant token, which every other call must carry as ``Authorization: Bearer``;
* ``POST /open-apis/im/v1/messages`` (``receive_id_type=chat_id``) sends a message, once per
  ``uuid``; ``PATCH /open-apis/im/v1/messages/{id}`` replaces a card;
* ``POST /callback/ws/endpoint`` hands out the long connection's address, and ``/ws`` is
  that connection: protobuf ``Frame``s (the SDK's own ``pbbp2`` schema) — pings answered
  with pongs, events pushed as data frames, each answered by the client with a frame whose
  payload holds the handler's result;
* acting as a Feishu user: press a card's control (a ``card.action.trigger`` callback, by
  the long connection or posted to the hub's ``/feishu/card``, optionally encrypted and
  signed with the app's encrypt key), send the bot a text (``im.message.receive_v1``).

A card's response to a press replaces the card, as Feishu's client does. ``refuse_next``
plays outages and frequency limits on the Open API; ``stop``/``start`` the whole platform.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from Crypto.Cipher import AES
from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from quart import Quart, request, websocket

from hub.channels.feishu.connection import forget_import_loop
from hub.testing import free_port
from tests.channels.peers import _Draining, serve_on_loopback

APP_ID = "cli_a1b2c3d4e5f60001"
APP_SECRET = "test-app-secret-0123456789abcdef"
VERIFICATION_TOKEN = "test-verification-token-abc123"
ENCRYPT_KEY = "test-encrypt-key-xyz789"
CONTROL, DATA = 0, 1

forget_import_loop()


@dataclass
class FeishuMessage:
    chat_id: str
    message_id: str
    msg_type: str
    content: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def card(self) -> dict[str, Any]:
        return self.content

    def texts(self) -> list[str]:
        """Every text the card shows, in order (title, subtitle, plain texts, buttons)."""
        found: list[str] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("tag") in ("plain_text", "lark_md", "markdown") and "content" in node:
                    found.append(str(node["content"]))
                for key, value in node.items():
                    if key != "summary":
                        walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(self.content if self.msg_type == "interactive" else {"text": self.content})
        return found

    @property
    def text(self) -> str:
        return "\n".join(self.texts())

    def controls(self) -> list[dict[str, Any]]:
        """Buttons, inputs and selects, in order."""
        found: list[dict[str, Any]] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("tag") in ("button", "input", "multi_select_static"):
                    found.append(node)
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(self.content)
        return found

    def buttons(self) -> list[dict[str, Any]]:
        return [c for c in self.controls() if c["tag"] == "button"]

    def labels(self) -> list[str]:
        return [b["text"]["content"] for b in self.buttons()]

    def button(self, starts_with: str) -> dict[str, Any]:
        for button in self.buttons():
            if starts_with in button["text"]["content"]:
                return button
        raise AssertionError(f"no button {starts_with!r} in {self.labels()}")

    def tags(self) -> set[str]:
        found: set[str] = set()

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if "tag" in node:
                    found.add(str(node["tag"]))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(self.content)
        return found


class _Refusal:
    def __init__(self, status: int, code: int, msg: str, headers: dict[str, str]) -> None:
        self.status, self.code, self.msg, self.headers = status, code, msg, headers


class FeishuPeer:
    def __init__(self, *, encrypt_key: str = "") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.app_id = APP_ID
        self.app_secret = APP_SECRET
        self.verification_token = VERIFICATION_TOKEN
        self.encrypt_key = encrypt_key
        self.tokens: set[str] = set()
        # What the long connection's address carries to authenticate it, as Feishu's does.
        self.access_key, self.ticket = secrets.token_hex(16), secrets.token_hex(16)
        self.messages: dict[str, FeishuMessage] = {}
        self.calls: list[str] = []
        self.sent_by_uuid: dict[str, str] = {}
        self.refusals: list[_Refusal] = []
        self.refused: list[int] = []  # the codes refused so far
        # Set: the long connection's endpoint refuses the app (too many connections), an
        # answer lark-oapi's client does not retry.
        self.refuse_endpoint = False
        self._message_ids = itertools.count(1)
        self._connections: list[Any] = []
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._shutdown: asyncio.Event | None = None
        self._server: asyncio.Task[None] | None = None
        self._serving = _Draining(self._build())

    def hub_env(self, **changes: str) -> dict[str, str]:
        """The settings of a hub process that uses this platform as its Feishu app's."""
        return {
            "LINEUP_FEISHU_APP_ID": self.app_id,
            "LINEUP_FEISHU_APP_SECRET": self.app_secret,
            "LINEUP_FEISHU_VERIFICATION_TOKEN": self.verification_token,
            "LINEUP_FEISHU_ENCRYPT_KEY": self.encrypt_key,
            "LINEUP_FEISHU_API_URL": self.url,
            **changes,
        }

    # --- the Open API ---------------------------------------------------------------------

    def _build(self) -> Quart:
        app = Quart("feishu_peer")

        @app.post("/open-apis/auth/v3/tenant_access_token/internal")
        async def tenant_token() -> Any:
            body = await request.get_json()
            self.calls.append("tenant_access_token")
            if body.get("app_id") != self.app_id:
                return {"code": 10003, "msg": "invalid param: app_id"}
            if body.get("app_secret") != self.app_secret:
                return {"code": 10014, "msg": "app secret invalid"}
            token = "t-" + secrets.token_hex(16)
            self.tokens.add(token)
            return {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200}

        @app.post("/open-apis/im/v1/messages")
        async def send() -> Any:
            refused = self._check("send")
            if refused is not None:
                return refused
            body = await request.get_json()
            if request.args.get("receive_id_type") != "chat_id":
                return {"code": 230001, "msg": "bad receive_id_type"}, 400
            key = body.get("uuid")
            if key and key in self.sent_by_uuid:  # sent once per uuid, as Feishu does
                message = self.messages[self.sent_by_uuid[key]]
            else:
                message = FeishuMessage(
                    chat_id=str(body["receive_id"]),
                    message_id=f"om_{next(self._message_ids):08d}",
                    msg_type=str(body["msg_type"]),
                    content=json.loads(body["content"]),
                )
                self.messages[message.message_id] = message
                if key:
                    self.sent_by_uuid[key] = message.message_id
            return {"code": 0, "msg": "success", "data": self._wire(message)}

        @app.patch("/open-apis/im/v1/messages/<message_id>")
        async def patch(message_id: str) -> Any:
            refused = self._check("patch")
            if refused is not None:
                return refused
            body = await request.get_json()
            message = self.messages.get(message_id)
            if message is None:
                return {"code": 230001, "msg": "message not found"}, 400
            message.history.append(message.content)
            message.content = json.loads(body["content"])
            return {"code": 0, "msg": "success", "data": {}}

        @app.post("/callback/ws/endpoint")
        async def endpoint() -> Any:
            body = await request.get_json()
            self.calls.append("ws endpoint")
            if body.get("AppID") != self.app_id or body.get("AppSecret") != self.app_secret:
                return {"code": 1000040343, "msg": "auth failed"}
            if self.refuse_endpoint:
                return {"code": 1000040350, "msg": "exceeded the connection limit"}
            return {
                "code": 0,
                "msg": "ok",
                "data": {
                    "URL": f"ws://127.0.0.1:{self.port}/ws?device_id=d{next(self._message_ids)}"
                    f"&service_id=7&access_key={self.access_key}&ticket={self.ticket}",
                    "ClientConfig": {
                        "ReconnectCount": -1,
                        "ReconnectInterval": 1,
                        "ReconnectNonce": 0,
                        "PingInterval": 120,
                    },
                },
            }

        @app.websocket("/ws")
        async def connection() -> None:
            socket = websocket._get_current_object()
            self._connections.append(socket)
            try:
                while True:
                    raw = await socket.receive()
                    if isinstance(raw, bytes):
                        self._received(socket, raw)
            finally:
                self._connections.remove(socket)

        return app

    def _check(self, call: str) -> Any:
        self.calls.append(call)
        header = request.headers.get("Authorization", "")
        if header.removeprefix("Bearer ") not in self.tokens:
            return {"code": 99991663, "msg": "Invalid access token for authorization."}, 400
        if self.refusals:
            refusal = self.refusals.pop(0)
            self.refused.append(refusal.code)
            body = {"code": refusal.code, "msg": refusal.msg}
            return body, refusal.status, refusal.headers
        return None

    def refuse_next(
        self, count: int, *, status: int, code: int, msg: str, reset_s: int | None = None
    ) -> None:
        """The next ``count`` message calls are refused with ``code`` (a frequency limit
        with ``reset_s``: the gateway's ``x-ogw-ratelimit-reset``)."""
        headers = {"x-ogw-ratelimit-reset": str(reset_s)} if reset_s is not None else {}
        self.refusals += [_Refusal(status, code, msg, headers) for _ in range(count)]

    @staticmethod
    def _wire(message: FeishuMessage) -> dict[str, Any]:
        return {
            "message_id": message.message_id,
            "chat_id": message.chat_id,
            "msg_type": message.msg_type,
            "create_time": str(int(time.time() * 1000)),
        }

    # --- the long connection --------------------------------------------------------------

    def _received(self, socket: Any, raw: bytes) -> None:
        frame = Frame()
        frame.ParseFromString(raw)
        headers = {h.key: h.value for h in frame.headers}
        if frame.method == CONTROL and headers.get("type") == "ping":
            pong = Frame()
            pong.method, pong.service, pong.SeqID, pong.LogID = CONTROL, frame.service, 0, 0
            header = pong.headers.add()
            header.key, header.value = "type", "pong"
            asyncio.get_running_loop().create_task(socket.send(pong.SerializeToString()))
        elif frame.method == DATA:
            waiting = self._answers.pop(headers.get("message_id", ""), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(json.loads(frame.payload))

    async def drop_connections(self) -> None:
        """Close every long connection from Feishu's side."""
        for socket in list(self._connections):
            with contextlib.suppress(Exception):
                await socket.close(1001)

    @property
    def connected(self) -> int:
        return len(self._connections)

    async def push(self, event: dict[str, Any], within: float = 15.0) -> dict[str, Any]:
        """Deliver ``event`` by the long connection; returns the handler's result."""
        for _ in range(int(within * 50)):
            if self._connections:
                break
            await asyncio.sleep(0.02)
        socket = self._connections[-1]
        message_id = uuid.uuid4().hex
        frame = Frame()
        frame.method, frame.service, frame.SeqID, frame.LogID = DATA, 7, 0, 0
        for key, value in (
            ("type", "event"),
            ("message_id", message_id),
            ("sum", "1"),
            ("seq", "0"),
            ("trace_id", uuid.uuid4().hex),
        ):
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.payload = json.dumps(event).encode()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[message_id] = answer
        await socket.send(frame.SerializeToString())
        response = await asyncio.wait_for(answer, within)
        data = response.get("data")
        return {
            "code": response.get("code"),
            "result": json.loads(base64.b64decode(data)) if data else None,
        }

    # --- acting as a Feishu user ----------------------------------------------------------

    def event(self, event_type: str, event: dict[str, Any], **header: Any) -> dict[str, Any]:
        return {
            "schema": "2.0",
            "header": {
                "event_id": uuid.uuid4().hex,
                "token": self.verification_token,
                "create_time": str(int(time.time() * 1_000_000)),
                "event_type": event_type,
                "tenant_key": "tenant-1",
                "app_id": self.app_id,
                **header,
            },
            "event": event,
        }

    def press_event(
        self,
        open_id: str,
        message: FeishuMessage,
        control: dict[str, Any],
        form: dict[str, Any] | None = None,
        **header: Any,
    ) -> dict[str, Any]:
        behaviours = control.get("behaviors") or [{}]
        action: dict[str, Any] = {
            "value": behaviours[0].get("value"),
            "tag": "button",
        }
        if control.get("name"):
            action["name"] = control["name"]
        if form is not None:
            action["form_value"] = form
        return self.event(
            "card.action.trigger",
            {
                "operator": {"tenant_key": "tenant-1", "open_id": open_id, "union_id": "on_x"},
                "token": "c-" + secrets.token_hex(8),
                "action": action,
                "host": "im_message",
                "context": {"open_message_id": message.message_id, "open_chat_id": message.chat_id},
            },
            **header,
        )

    async def press(
        self,
        open_id: str,
        message: FeishuMessage,
        label: str,
        form: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Press the button ``label`` of ``message`` by the long connection; returns the
        callback's response (``toast``, ``card``), and shows its card as Feishu would."""
        event = self.press_event(open_id, message, message.button(label), form)
        return await self.deliver_press(message, event)

    async def deliver_press(self, message: FeishuMessage, event: dict[str, Any]) -> dict[str, Any]:
        answer = await self.push(event)
        result = answer["result"] or {}
        self._show(message, result)
        return result

    async def post_press(
        self, hub_url: str, message: FeishuMessage, event: dict[str, Any], **how: Any
    ) -> httpx.Response:
        """Post a press to the hub's callback address, as Feishu does in HTTP mode."""
        response = await self.post_callback(hub_url, event, **how)
        if response.status_code == 200:
            self._show(message, response.json())
        return response

    async def post_callback(
        self,
        hub_url: str,
        body: dict[str, Any],
        *,
        encrypt_key: str | None = None,
        signed_at: float | None = None,
        raw: bytes | None = None,
    ) -> httpx.Response:
        key = self.encrypt_key if encrypt_key is None else encrypt_key
        data = raw if raw is not None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if key and raw is None:
            data = json.dumps({"encrypt": encrypt(key, data)}).encode()
            timestamp = str(int(signed_at if signed_at is not None else time.time()))
            nonce = secrets.token_hex(8)
            headers |= {
                "X-Lark-Request-Timestamp": timestamp,
                "X-Lark-Request-Nonce": nonce,
                "X-Lark-Signature": hashlib.sha256(
                    (timestamp + nonce + key).encode() + data
                ).hexdigest(),
            }
        async with httpx.AsyncClient(timeout=15) as client:
            return await client.post(f"{hub_url}/feishu/card", content=data, headers=headers)

    def _show(self, message: FeishuMessage, result: dict[str, Any]) -> None:
        card = result.get("card") if isinstance(result, dict) else None
        if card and card.get("type") == "raw":
            message.history.append(message.content)
            message.content = card["data"]

    async def send_text(self, open_id: str, chat_id: str, text: str) -> dict[str, Any]:
        """Send the bot ``text`` by the long connection; returns once the hub handled it."""
        return await self.push(self.text_event(open_id, chat_id, text))

    def text_event(self, open_id: str, chat_id: str, text: str) -> dict[str, Any]:
        return self.event(
            "im.message.receive_v1",
            {
                "sender": {
                    "sender_id": {"open_id": open_id, "union_id": "on_x", "user_id": "u"},
                    "sender_type": "user",
                    "tenant_key": "tenant-1",
                },
                "message": {
                    "message_id": f"om_in_{uuid.uuid4().hex[:8]}",
                    "create_time": str(int(time.time() * 1000)),
                    "chat_id": chat_id,
                    "chat_type": "p2p",
                    "message_type": "text",
                    "content": json.dumps({"text": text}),
                    "mentions": [],
                },
            },
        )

    def chat(self, chat_id: str) -> list[FeishuMessage]:
        return [m for m in self.messages.values() if m.chat_id == chat_id]

    # --- running --------------------------------------------------------------------------

    async def start(self) -> None:
        self._shutdown = asyncio.Event()
        self._serving.open()
        self._server = await serve_on_loopback(self._serving, self.port, self._shutdown)

    async def stop(self) -> None:
        if self._shutdown is not None and self._server is not None:
            await self._serving.drain()
            for socket in list(self._connections):
                with contextlib.suppress(Exception):
                    await socket.close(1001)
            self._shutdown.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._server
            self._server = None


def encrypt(key: str, plaintext: bytes) -> str:
    """Feishu's event encryption: AES-256-CBC under SHA-256(key), random IV in front."""
    iv = secrets.token_bytes(16)
    pad = 16 - len(plaintext) % 16
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plaintext + bytes([pad]) * pad)).decode()
