"""The handles this MCP agent gives out for its requests, and telling them from anything else.

A handle is the id of the card the agent asked. ``get_decision`` must refuse a handle that
names no request of this agent (a typo, another agent's card) instead of waiting forever
for an answer that cannot come. The server may have restarted since it asked, so it cannot
rely on remembering its handles: each one carries a short MAC of its random part, keyed by
the agent's credential, which proves it was minted here without keeping a list.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

_NONCE_HEX = 20  # 80 random bits
_MAC_HEX = 12  # 48 bits: a typo or a guess passes one time in 2**48
_SHAPE = re.compile(rf"int_([0-9a-f]{{{_NONCE_HEX}}})([0-9a-f]{{{_MAC_HEX}}})")


class Handles:
    """Mints and recognises handles under the key of one agent's credential.

    ``credential`` is read when needed: a stdio server learns its credential only once it
    has paired, after the tools exist."""

    def __init__(self, credential: Callable[[], str | None]) -> None:
        self._credential = credential

    def mint(self) -> str:
        nonce = secrets.token_hex(_NONCE_HEX // 2)
        return f"int_{nonce}{self._mac(nonce)}"

    def minted_here(self, handle: str) -> bool:
        shape = _SHAPE.fullmatch(handle)
        return shape is not None and hmac.compare_digest(shape[2], self._mac(shape[1]))

    def _mac(self, nonce: str) -> str:
        key = hashlib.sha256(b"lineup-mcp-handles\x00" + (self._credential() or "").encode())
        return hmac.new(key.digest(), nonce.encode(), hashlib.sha256).hexdigest()[:_MAC_HEX]
