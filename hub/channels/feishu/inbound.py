"""What Feishu sends the hub, by the long connection or by HTTP, checked before it acts.

Both ways in end in lark-oapi's ``EventDispatcherHandler``, whose handlers (synchronous, as
the SDK calls them) hand the work to the hub's event loop: a card press
(``card.action.trigger``) becomes a ``Callback`` for ``hub.channels.feishu.answers``, and
its answer (a toast, the redrawn card) goes back to Feishu as the callback's response; a
message to the bot (``im.message.receive_v1``) may be a link code
(``hub.channels.feishu.linking``).

Every event, whichever way it came, must carry the app's verification token, and each
event id acts once: a replay (the same callback posted again, or the long connection
delivering an event twice) is answered and changes nothing. The id is spent in
``UsedLink``, the table of one-time nonces, so several hub processes agree.

``POST /feishu/card`` (the callback address, for a hub Feishu can reach) checks more before
the SDK sees the body: with ``LINEUP_FEISHU_ENCRYPT_KEY`` set, only an encrypted body is
taken, and except for the address check (``url_verification``) it must carry Feishu's
signature (``X-Lark-Signature``: SHA-256 of timestamp, nonce, key and body) made at most
five minutes ago. A request that fails a check is refused with 401 and never reaches a
handler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lark_oapi.api.im.v1 import P2ImMessageReceiveV1
from lark_oapi.core.const import LARK_REQUEST_NONCE, LARK_REQUEST_SIGNATURE, LARK_REQUEST_TIMESTAMP
from lark_oapi.core.model import RawRequest
from lark_oapi.core.utils import AESCipher
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    CallBackCard,
    CallBackToast,
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)
from lark_oapi.event.dispatcher_handler import EventDispatcherHandler
from tortoise.exceptions import IntegrityError

from hub.core.store.notification_models import UsedLink
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)

CARD_PATH = "/feishu/card"
SIGNATURE_WINDOW_S = 300
MAX_BODY_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class Callback:
    """A card press as Feishu described it."""

    event_id: str
    open_id: str  # who pressed
    message_id: str
    chat_id: str
    value: Any
    form: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    """What the press is answered with: a toast, and the card redrawn (None: unchanged)."""

    toast: str
    kind: str = "info"  # success, info, warning, error
    card: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class IncomingText:
    """A text message someone sent the bot in a one-to-one chat."""

    event_id: str
    open_id: str
    chat_id: str
    message_id: str
    text: str


OnHub = Callable[[Awaitable[Any]], Any]


class Inbound:
    # Feishu waits three seconds for a press's answer. One not ready sooner is answered "⏳";
    # the work goes on, and the card it redraws is sent as an update (``on_late``).
    answer_within_s: ClassVar[float] = 2.5

    def __init__(
        self,
        verification_token: str,
        encrypt_key: str,
        on_press: Callable[[Callback], Awaitable[Reply]],
        on_text: Callable[[IncomingText], Awaitable[None]],
        on_late: Callable[[str, dict[str, Any]], Awaitable[None]],
    ) -> None:
        self.verification_token = verification_token
        self.encrypt_key = encrypt_key
        self.on_press = on_press
        self.on_text = on_text
        self.on_late = on_late
        # Set once the channel runs: the hub's loop, where handlers do their work.
        self.hub_loop: asyncio.AbstractEventLoop | None = None
        self.dispatcher: EventDispatcherHandler = (
            EventDispatcherHandler.builder(encrypt_key, verification_token)
            .register_p2_card_action_trigger(self._card_action)
            .register_p2_im_message_receive_v1(self._message)
            .build()
        )

    # --- the SDK's handlers, on the connection's thread or a worker thread ----------------

    def _on_hub(self, work: Awaitable[Any]) -> concurrent.futures.Future[Any]:
        if self.hub_loop is None:
            raise RuntimeError("the Feishu channel is not running")
        return asyncio.run_coroutine_threadsafe(_awaited(work), self.hub_loop)

    def _card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        working = self._on_hub(self._press(data))
        try:
            return _response(working.result(timeout=self.answer_within_s))
        except TimeoutError:
            message_id = data.event.context.open_message_id if data.event.context else ""
            working.add_done_callback(lambda done: self._late(str(message_id or ""), done))
            return _response(Reply("⏳", "info"))

    def _late(self, message_id: str, done: concurrent.futures.Future[Any]) -> None:
        """A press answered too late for its callback: its card goes out as an update."""
        if done.cancelled() or done.exception() is not None or not message_id:
            return
        reply: Reply = done.result()
        if reply.card is not None and self.hub_loop is not None:
            self._on_hub(self.on_late(message_id, reply.card))

    def _message(self, data: P2ImMessageReceiveV1) -> None:
        self._on_hub(self._text(data)).result(timeout=30)

    # --- on the hub's loop ----------------------------------------------------------------

    async def _press(self, data: P2CardActionTrigger) -> Reply:
        header, event = data.header, data.event
        if not self._token_matches(header.token if header else None):
            logger.warning("a Feishu card press with a wrong verification token was refused")
            return Reply("Refused: this press did not come from Feishu.", "error")
        event_id = (header.event_id if header else None) or ""
        action = event.action if event else None
        context = event.context if event else None
        operator = event.operator if event else None
        if not event_id or action is None or operator is None or not operator.open_id:
            return Reply("Refused: this press is incomplete.", "error")
        if not await first_time(event_id):
            return Reply("This press was already handled.", "info")
        return await self.on_press(
            Callback(
                event_id=event_id,
                open_id=operator.open_id,
                message_id=(context.open_message_id if context else None) or "",
                chat_id=(context.open_chat_id if context else None) or "",
                value=_value(action.value),
                form=action.form_value or {},
            )
        )

    async def _text(self, data: P2ImMessageReceiveV1) -> None:
        header, event = data.header, data.event
        if not self._token_matches(header.token if header else None):
            logger.warning("a Feishu message event with a wrong verification token was refused")
            return
        message = event.message if event else None
        sender = event.sender if event else None
        sender_id = sender.sender_id if sender else None
        if message is None or sender_id is None or not sender_id.open_id:
            return
        if message.chat_type != "p2p" or message.message_type != "text":
            return
        event_id = (header.event_id if header else None) or ""
        if not event_id or not await first_time(event_id):
            return
        try:
            text = str(json.loads(message.content or "{}").get("text") or "")
        except (ValueError, AttributeError):
            return
        await self.on_text(
            IncomingText(
                event_id, sender_id.open_id, message.chat_id or "", message.message_id or "", text
            )
        )

    def _token_matches(self, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(
            str(token).encode(), self.verification_token.encode()
        )

    # --- POST /feishu/card ----------------------------------------------------------------

    async def answer_http(self, headers: dict[str, str], body: bytes) -> tuple[bytes, int]:
        """A request to the callback address: refused (401) or answered by the SDK."""
        problem = self.http_problem(headers, body)
        if problem is not None:
            logger.warning("a request to %s was refused: %s", CARD_PATH, problem)
            return json.dumps({"msg": problem}).encode(), 401
        lower = {name.lower(): value for name, value in headers.items()}
        raw = RawRequest()
        raw.uri = CARD_PATH
        raw.body = body
        raw.headers = {
            name: lower.get(name.lower(), "")
            for name in (LARK_REQUEST_TIMESTAMP, LARK_REQUEST_NONCE, LARK_REQUEST_SIGNATURE)
        }
        answer = await asyncio.to_thread(self.dispatcher.do, raw)
        return answer.content or b"", answer.status_code or 500

    def http_problem(self, headers: dict[str, str], body: bytes) -> str | None:
        """Why a request to the callback address must be refused; None when it may go on."""
        if len(body) > MAX_BODY_BYTES:
            return "the body is too large"
        try:
            outer = json.loads(body)
        except ValueError:
            return "the body is not JSON"
        if not isinstance(outer, dict):
            return "the body is not a JSON object"
        if "encrypt" in outer:
            if not self.encrypt_key:
                return "the body is encrypted, but LINEUP_FEISHU_ENCRYPT_KEY is not set"
            try:
                inner = json.loads(AESCipher(self.encrypt_key).decrypt_str(str(outer["encrypt"])))
            except Exception:
                return "the body does not decrypt with the encrypt key"
        elif self.encrypt_key:
            return "the body is not encrypted, but an encrypt key is set"
        else:
            inner = outer
        if not isinstance(inner, dict):
            return "the body is not a JSON object"
        header = inner.get("header") if isinstance(inner.get("header"), dict) else {}
        token = header.get("token") if header else inner.get("token")
        if not self._token_matches(token if isinstance(token, str) else None):
            return "wrong verification token"
        if self.encrypt_key and inner.get("type") != "url_verification":
            return self._signature_problem(headers, body)
        return None

    def _signature_problem(self, headers: dict[str, str], body: bytes) -> str | None:
        lower = {name.lower(): value for name, value in headers.items()}
        timestamp = lower.get(LARK_REQUEST_TIMESTAMP.lower(), "")
        nonce = lower.get(LARK_REQUEST_NONCE.lower(), "")
        signature = lower.get(LARK_REQUEST_SIGNATURE.lower(), "")
        if not (timestamp and nonce and signature):
            return "the signature headers are missing"
        try:
            age = abs(time.time() - int(timestamp))
        except ValueError:
            return "the signature's timestamp is not a number"
        if age > SIGNATURE_WINDOW_S:
            return "the signature is too old"
        expected = hashlib.sha256(
            (timestamp + nonce + self.encrypt_key).encode() + body
        ).hexdigest()
        if not hmac.compare_digest(expected.encode(), signature.encode()):
            return "wrong signature"
        return None


async def first_time(event_id: str, user_id: str = "", interaction_id: str = "") -> bool:
    """Spend ``event_id``: True the first time, False for a repeat of it."""
    nonce = "feishu:" + hashlib.sha256(event_id.encode()).hexdigest()[:32]
    try:
        await UsedLink.create(
            nonce=nonce, user_id=user_id, interaction_id=interaction_id, used_at=utcnow()
        )
    except IntegrityError:
        return False
    return True


async def _awaited(work: Awaitable[Any]) -> Any:
    return await work


def _value(value: Any) -> Any:
    """A button's value as sent; Feishu may hand it over as a JSON string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _response(reply: Reply) -> P2CardActionTriggerResponse:
    response = P2CardActionTriggerResponse()
    toast = CallBackToast()
    toast.type, toast.content = reply.kind, reply.toast
    response.toast = toast
    if reply.card is not None:
        card = CallBackCard()
        card.type, card.data = "raw", reply.card
        response.card = card
    return response
