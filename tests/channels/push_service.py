"""A Web Push service on loopback that checks every push as a real one would.

It plays both ends of a subscription: ``subscribe()`` makes what a browser makes (a P-256
key pair and a 16-byte auth secret, RFC 8291) and hands back the ``PushSubscription`` JSON
a browser would give the hub, with an endpoint on this service. Each push it takes must
carry a valid VAPID token (RFC 8292: ES256 signed by the key in ``k``, ``aud`` this
service's origin, ``exp`` in the future and within 24 hours, a ``sub``), ``TTL`` and
``Urgency`` headers (RFC 8030) and an ``aes128gcm`` body, which it decrypts with the
subscription's private key, as the browser would. Anything else is answered 400 or 401,
and kept in ``refused`` with the reason. ``gone(...)`` makes a subscription answer 410.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from quart import Quart, request

from hub.testing import free_port
from tests.channels.peers import serve_on_loopback

URGENCIES = ("very-low", "low", "normal", "high")


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """One subscription, as the browser holds it."""

    id: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    def to_json(self) -> dict[str, Any]:
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)},
        }


@dataclass
class Received:
    browser: str
    headers: dict[str, str]
    claims: dict[str, Any]
    vapid_key: str
    payload: dict[str, Any]
    size: int  # of the encrypted body
    at: float = field(default_factory=time.perf_counter)  # when it arrived, this process's clock


@dataclass
class PushService:
    port: int = field(default_factory=free_port)
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    _browsers: dict[str, Browser] = field(default_factory=dict)
    _gone: set[str] = field(default_factory=set)
    _failing: int = 0
    failed: int = 0  # pushes answered 503 by ``fail_next``
    _shutdown: asyncio.Event | None = None
    _server: asyncio.Task[None] | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def subscribe(self) -> Browser:
        browser_id = b64url(os.urandom(9))
        browser = Browser(
            browser_id,
            f"{self.origin}/push/{browser_id}",
            ec.generate_private_key(ec.SECP256R1()),
            os.urandom(16),
        )
        self._browsers[browser_id] = browser
        return browser

    def gone(self, browser: Browser) -> None:
        self._gone.add(browser.id)

    def fail_next(self, count: int) -> None:
        """Answer the next ``count`` pushes 503, as a push service having a bad minute."""
        self._failing = count

    def to(self, browser: Browser) -> list[dict[str, Any]]:
        return [r.payload for r in self.received if r.browser == browser.id]

    # --- the wire -------------------------------------------------------------------------

    def _build(self) -> Quart:
        app = Quart("push_service")

        @app.post("/push/<browser_id>")
        async def push(browser_id: str) -> tuple[str, int]:
            browser = self._browsers.get(browser_id)
            if browser is None or browser_id in self._gone:
                return "", 410
            if self._failing:
                self._failing -= 1
                self.failed += 1
                return "busy", 503
            body = await request.get_data()
            try:
                received = self._checked(browser, request.headers, body)
            except ValueError as problem:
                self.refused.append(str(problem))
                return str(problem), 401 if "VAPID" in str(problem) else 400
            self.received.append(received)
            return "", 201

        return app

    def _checked(self, browser: Browser, headers: Any, body: bytes) -> Received:
        claims, key = self._vapid(headers.get("Authorization", ""))
        ttl = headers.get("TTL", "")
        if not ttl.isdigit():
            raise ValueError(f"TTL header missing or not seconds: {ttl!r}")
        if headers.get("Urgency") not in URGENCIES:
            raise ValueError(f"Urgency header missing or unknown: {headers.get('Urgency')!r}")
        if headers.get("Content-Encoding") != "aes128gcm":
            raise ValueError("the body is not aes128gcm")
        try:
            plain = http_ece.decrypt(
                body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
            )
        except Exception as error:
            raise ValueError(f"the body does not decrypt: {error}") from error
        seen = {name.lower(): value for name, value in headers.items()}
        return Received(browser.id, seen, claims, key, json.loads(plain), len(body))

    def _vapid(self, authorization: str) -> tuple[dict[str, Any], str]:
        scheme, _, rest = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise ValueError("VAPID: Authorization is not 'vapid t=..., k=...'")
        parts = dict(p.strip().split("=", 1) for p in rest.split(",") if "=" in p)
        token, key = parts.get("t", ""), parts.get("k", "")
        try:
            head, claims_part, signature = token.split(".")
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
            raw = unb64url(signature)
            der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
            public.verify(der, f"{head}.{claims_part}".encode(), ec.ECDSA(hashes.SHA256()))
            header = json.loads(unb64url(head))
            claims = json.loads(unb64url(claims_part))
        except (ValueError, InvalidSignature) as error:
            raise ValueError(f"VAPID: the token does not verify: {error!r}") from error
        if header.get("alg") != "ES256":
            raise ValueError("VAPID: the token is not ES256")
        if claims.get("aud") != self.origin:
            raise ValueError(f"VAPID: aud {claims.get('aud')!r} is not {self.origin}")
        expires = claims.get("exp")
        if not isinstance(expires, int) or not time.time() < expires <= time.time() + 24 * 3600:
            raise ValueError(f"VAPID: exp {expires!r} is not within the next 24 hours")
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            raise ValueError("VAPID: sub is not a mailto: or https: contact")
        return claims, key

    # --- running --------------------------------------------------------------------------

    async def start(self) -> None:
        self._shutdown = asyncio.Event()
        self._server = await serve_on_loopback(self._build(), self.port, self._shutdown)

    async def stop(self) -> None:
        if self._shutdown is not None and self._server is not None:
            self._shutdown.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._server
            self._server = None
