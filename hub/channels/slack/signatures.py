"""Checking that a request came from Slack, once: its ``v0`` signature and its age.

Slack signs each request it posts with the app's signing secret:
``X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:{timestamp}:{body}"))`` beside
``X-Slack-Request-Timestamp``. slack-sdk's ``SignatureVerifier`` checks the signature and
refuses a timestamp more than five minutes off. A request captured and sent again inside
those five minutes would still pass that, so each accepted signature is remembered for the
window and a second request bearing it is refused: a replay changes nothing.

The memory is this process's. Several hub processes behind one address each remember what
they saw; a replay reaching another process still decides nothing twice — every answer
carries Slack's ``trigger_id`` as its idempotency key — and at most redraws a message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from slack_sdk.signature import SignatureVerifier

WINDOW_S = 5 * 60
MAX_REMEMBERED = 100_000  # far above any real rate; a flood cannot grow the memory past it


class RequestCheck:
    def __init__(self, signing_secret: str) -> None:
        self.verifier = SignatureVerifier(signing_secret)
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def accepts(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """Whether ``body`` with ``headers`` is Slack's, well signed, recent and new."""
        if not self.verifier.is_valid_request(body, dict(headers)):
            return False
        signature = headers.get("X-Slack-Signature", "")
        now = time.monotonic()
        with self._lock:
            self._forget_before(now)
            if signature in self._seen or len(self._seen) >= MAX_REMEMBERED:
                return False
            # Slack refuses timestamps more than the window off either way: keep it twice.
            self._seen[signature] = now + 2 * WINDOW_S
        return True

    def _forget_before(self, now: float) -> None:
        _forget_before(self._seen, now)


class SeenOnce:
    """Ids (Socket Mode envelopes, Events API event ids) handled in the last window: Slack
    sends one again when it missed the acknowledgement, and it must not act twice."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self._seen: dict[str, float] = {}

    def first_time(self, key: str) -> bool:
        """True the first time ``key`` is seen in the window (and for no key at all)."""
        if not key:
            return True
        now = time.monotonic()
        _forget_before(self._seen, now)
        if key in self._seen:
            return False
        self._seen[key] = now + self.window_s
        return True


def _forget_before(seen: dict[str, float], now: float) -> None:
    """Drop the entries expired by ``now``: all live the same time, so a dict's insertion
    order is their expiry order and the oldest are first."""
    while seen:
        oldest = next(iter(seen))
        if seen[oldest] >= now:
            return
        del seen[oldest]
