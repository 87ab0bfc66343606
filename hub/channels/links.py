"""Signed, expiring, single-use links to a card, bound to one person (and maybe one option).

Email puts one link per option in a mail; any surface that cannot render a card natively
degrades to a link to the whole card. Both are the same thing: ``/a/<token>``, where the
token is signed with the hub's secret (itsdangerous) and carries the workspace, the
interaction, the recipient (their id and a digest of the address it was sent to), the option
if any, the surface to record as ``via``, the hash of the action the message showed (so an
answer from a stale message is refused), and a nonce. A GET shows a confirmation page; only
its POST decides (``hub.channels.pages``), and the nonce is then spent (``UsedLink``).

A batch mail's links (``/b/<token>``, ``hub.channels.batch_pages``) are signed the same
way under a salt of their own and carry the batch they answer instead of a card.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

DEFAULT_MAX_AGE_S = 7 * 24 * 3600
_SALT = "lineup.card-link.v1"
_BATCH_SALT = "lineup.batch-link.v1"  # a batch link never reads as a card link, or back


class LinkError(Exception):
    """The link cannot be used; ``reason`` names why (a key of the page texts)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CardLink:
    workspace_id: str
    interaction_id: str
    user_id: str
    address_digest: str
    option_id: str | None
    via: str
    nonce: str
    action_hash: str | None = None


@dataclass(frozen=True, slots=True)
class BatchLink:
    """A link answering the cards one batch mail listed (``DeliveredBatch``): all approved,
    all rejected, or item by item (``action`` ``approve``, ``reject`` or ``pick``)."""

    batch_id: str
    user_id: str
    address_digest: str
    action: str
    nonce: str


BATCH_ACTIONS = ("approve", "reject", "pick")


def address_digest(address: str) -> str:
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()[:16]


class LinkSigner:
    def __init__(self, secret_key: str, public_url: str, max_age_s: int = DEFAULT_MAX_AGE_S):
        self._serializer = URLSafeTimedSerializer(secret_key, salt=_SALT)
        self._batches = URLSafeTimedSerializer(secret_key, salt=_BATCH_SALT)
        self.public_url = public_url.rstrip("/")
        self.max_age_s = max_age_s

    def token(
        self,
        *,
        workspace_id: str,
        interaction_id: str,
        user_id: str,
        address: str,
        via: str,
        option_id: str | None = None,
        action_hash: str | None = None,
    ) -> str:
        payload: dict[str, Any] = {
            "w": workspace_id,
            "i": interaction_id,
            "u": user_id,
            "a": address_digest(address),
            "v": via,
            "n": secrets.token_urlsafe(12),
        }
        if option_id is not None:
            payload["o"] = option_id
        if action_hash is not None:
            payload["h"] = action_hash
        return str(self._serializer.dumps(payload))

    def url(self, **fields: Any) -> str:
        return f"{self.public_url}/a/{self.token(**fields)}"

    def batch_url(self, *, batch_id: str, user_id: str, address: str, action: str) -> str:
        payload = {
            "b": batch_id,
            "u": user_id,
            "a": address_digest(address),
            "k": action,
            "n": secrets.token_urlsafe(12),
        }
        return f"{self.public_url}/b/{self._batches.dumps(payload)}"

    def read_batch(self, token: str) -> BatchLink:
        try:
            payload = self._batches.loads(token, max_age=self.max_age_s)
        except SignatureExpired:
            raise LinkError("link_expired") from None
        except BadSignature:
            raise LinkError("link_invalid") from None
        try:
            link = BatchLink(
                batch_id=str(payload["b"]),
                user_id=str(payload["u"]),
                address_digest=str(payload["a"]),
                action=str(payload["k"]),
                nonce=str(payload["n"]),
            )
        except (KeyError, TypeError):
            raise LinkError("link_invalid") from None
        if link.action not in BATCH_ACTIONS:
            raise LinkError("link_invalid")
        return link

    def read(self, token: str) -> CardLink:
        try:
            payload = self._serializer.loads(token, max_age=self.max_age_s)
        except SignatureExpired:
            raise LinkError("link_expired") from None
        except BadSignature:
            raise LinkError("link_invalid") from None
        try:
            return CardLink(
                workspace_id=str(payload["w"]),
                interaction_id=str(payload["i"]),
                user_id=str(payload["u"]),
                address_digest=str(payload["a"]),
                option_id=str(payload["o"]) if "o" in payload else None,
                via=str(payload["v"]),
                nonce=str(payload["n"]),
                action_hash=str(payload["h"]) if "h" in payload else None,
            )
        except (KeyError, TypeError):
            raise LinkError("link_invalid") from None


__all__ = ["BATCH_ACTIONS", "BatchLink", "CardLink", "LinkError", "LinkSigner", "address_digest"]
