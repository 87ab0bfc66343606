"""The Feishu/Lark Open API as the channel uses it: send a card or text, redraw a card.

Calls go through lark-oapi's client (``LINEUP_FEISHU_API_URL`` is its domain). Its own token
step fetches ``tenant_access_token`` with a blocking ``requests`` call inside each async
call, which would stall the hub's event loop; so the client runs with ``enable_set_token``
and the token is fetched here with the SDK's own request and async transport, kept until
shortly before it expires, and handed to each call.

What an answer means for the outbox (``hub.core.notify.outbox``):

* ``code`` 0: done.
* A frequency limit (HTTP 429, or ``code`` 99991400, 230020, 11232): ``RetryLater`` for as
  long as ``x-ogw-ratelimit-reset`` says (else a few seconds), so the row waits at least that.
* The chat cannot be reached by this bot any more (230002 the bot left the chat, 230013 the
  person is outside the app's availability): ``DeliveryRefused``, retrying cannot help.
* Anything else, or no answer: an exception, retried with backoff.

Sends carry a ``uuid`` derived from what is sent and to whom: Feishu sends a message once
per uuid (within an hour), so a retry after a lost answer does not post the card twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from lark_oapi import Client, LogLevel
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.const import UTF_8
from lark_oapi.core.http import Transport
from lark_oapi.core.json import JSON
from lark_oapi.core.model import BaseResponse, RequestOption
from lark_oapi.core.token.access_token_response import AccessTokenResponse
from lark_oapi.core.token.create_self_tenant_token_request import CreateSelfTenantTokenRequest
from lark_oapi.core.token.create_token_request_body import CreateTokenRequestBody

from hub.core.notify.outbox import DeliveryRefused, RetryLater

logger = logging.getLogger(__name__)

# Feishu's frequency limits: the gateway's, per chat, and the tenant's message service.
RATE_LIMITED = frozenset({99991400, 230020, 11232})
# The bot cannot reach that chat any more: it was removed, or the person is outside the
# app's availability.
UNREACHABLE = frozenset({230002, 230013})
# The tenant token was refused (expired early, or revoked): fetch a new one and try again.
TOKEN_REFUSED = frozenset({99991661, 99991663, 99991668})
# Refusals of the app's credentials themselves: App ID unknown, or App Secret wrong.
CREDENTIALS_REFUSED = frozenset({10003, 10014})
RESET_HEADER = "x-ogw-ratelimit-reset"
DEFAULT_WAIT_S = 5.0
TIMEOUT_S = 10.0


class FeishuError(Exception):
    """An answer other than success; ``code`` is Feishu's."""

    def __init__(self, what: str, code: int | None, message: str) -> None:
        super().__init__(f"{what}: Feishu answered {code}: {message}")
        self.code = code
        self.message = message


class CredentialsRefused(FeishuError):
    """Feishu says the App ID or App Secret is wrong."""


@dataclass(frozen=True, slots=True)
class Sent:
    message_id: str
    chat_id: str


class FeishuApi:
    def __init__(self, app_id: str, app_secret: str, domain: str) -> None:
        self.app_id = app_id
        self.app_secret = app_secret
        self.client: Client = (
            Client.builder()
            .app_id(app_id)
            .app_secret(app_secret)
            .domain(domain)
            .timeout(TIMEOUT_S)
            .enable_set_token(True)
            .log_level(LogLevel.WARNING)
            .build()
        )
        self._token = ""
        self._token_until = 0.0
        self._token_lock = asyncio.Lock()

    # --- the tenant token -----------------------------------------------------------------

    async def tenant_token(self, *, fresh: bool = False) -> str:
        async with self._token_lock:
            if fresh or not self._token or time.monotonic() >= self._token_until:
                self._token, lifetime = await self._fetch_token()
                # Renewed well before it runs out, as the SDK's own token cache does.
                self._token_until = time.monotonic() + max(60.0, lifetime - 600.0)
            return self._token

    async def _fetch_token(self) -> tuple[str, float]:
        request = (
            CreateSelfTenantTokenRequest.builder()
            .request_body(
                CreateTokenRequestBody.builder()
                .app_id(self.app_id)
                .app_secret(self.app_secret)
                .build()
            )
            .build()
        )
        raw = await Transport.aexecute(self.client.config, request)
        answer = JSON.unmarshal(str(raw.content, UTF_8), AccessTokenResponse)
        if answer.code in CREDENTIALS_REFUSED:
            raise CredentialsRefused("tenant_access_token", answer.code, answer.msg or "")
        if not answer.success() or not answer.tenant_access_token:
            _raise_for(raw.status_code, raw.headers, answer.code, answer.msg, "tenant token")
            raise FeishuError("tenant_access_token", answer.code, answer.msg or "")
        return str(answer.tenant_access_token), float(answer.expire or 7200)

    # --- messages -------------------------------------------------------------------------

    async def send_card(self, chat_id: str, card: dict[str, Any], uuid: str | None = None) -> Sent:
        return await self._send(chat_id, "interactive", card, uuid)

    async def send_text(self, chat_id: str, text: str, uuid: str | None = None) -> Sent:
        return await self._send(chat_id, "text", {"text": text}, uuid)

    async def _send(
        self, chat_id: str, kind: str, content: dict[str, Any], uuid: str | None
    ) -> Sent:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat_id)
            .msg_type(kind)
            .content(json.dumps(content, ensure_ascii=False))
        )
        if uuid:
            body = body.uuid(uuid)
        request = (
            CreateMessageRequest.builder()
            .receive_id_type("chat_id")
            .request_body(body.build())
            .build()
        )
        answer = await self._call("send a message", self.client.im.v1.message.acreate, request)
        data = answer.data
        return Sent(str(data.message_id), str(data.chat_id or chat_id))

    async def reply_text(self, message_id: str, text: str) -> None:
        request = (
            ReplyMessageRequest.builder()
            .message_id(message_id)
            .request_body(
                ReplyMessageRequestBody.builder()
                .msg_type("text")
                .content(json.dumps({"text": text}, ensure_ascii=False))
                .build()
            )
            .build()
        )
        await self._call("reply", self.client.im.v1.message.areply, request)

    async def patch_card(self, message_id: str, card: dict[str, Any]) -> None:
        """Redraw a card the bot sent (its ``config.update_multi`` lets everyone see it)."""
        request = (
            PatchMessageRequest.builder()
            .message_id(message_id)
            .request_body(
                PatchMessageRequestBody.builder()
                .content(json.dumps(card, ensure_ascii=False))
                .build()
            )
            .build()
        )
        await self._call("update a card", self.client.im.v1.message.apatch, request)

    async def _call(self, what: str, method: Any, request: Any) -> Any:
        for attempt in (1, 2):
            token = await self.tenant_token(fresh=attempt == 2)
            option = RequestOption.builder().tenant_access_token(token).build()
            answer: BaseResponse = await method(request, option)
            if answer.success():
                return answer
            if answer.code in TOKEN_REFUSED and attempt == 1:
                continue
            raw = answer.raw
            _raise_for(
                raw.status_code if raw else None,
                raw.headers if raw else None,
                answer.code,
                answer.msg,
                what,
            )
            raise FeishuError(what, answer.code, answer.msg or "")
        raise AssertionError("unreachable")  # pragma: no cover


def _raise_for(
    status: int | None,
    headers: dict[str, str] | None,
    code: int | None,
    message: str | None,
    what: str,
) -> None:
    """Raise what the outbox should make of a refusal that is not simply transient."""
    if status == 429 or code in RATE_LIMITED:
        raise RetryLater(f"{what}: Feishu's frequency limit ({code}: {message})", _reset_s(headers))
    if code in UNREACHABLE:
        raise DeliveryRefused(f"{what}: Feishu answered {code}: {message}")


def _reset_s(headers: dict[str, str] | None) -> float:
    """Seconds until the limit resets, as the gateway says (``x-ogw-ratelimit-reset``)."""
    for name, value in (headers or {}).items():
        if name.lower() == RESET_HEADER:
            try:
                return min(3600.0, max(0.0, float(value)))
            except ValueError:
                break
    return DEFAULT_WAIT_S
