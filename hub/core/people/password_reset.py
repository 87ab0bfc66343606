"""Resetting a forgotten password through a link mailed to the account's address.

The link's token is ``<user id>.<expiry>.<signature>``: an HMAC, keyed with the hub's
secret, over the person's id, the expiry and their current password hash. Nothing is
stored, and yet the link is

- signed: without the hub's secret nobody can make one;
- expiring: ``RESET_TTL`` after it was made it is refused;
- single-use: setting the password changes the hash the signature covers, so the link
  dies the moment it is used — and so do any other reset links still in mailboxes, and
  every link when the person changes the password in Settings.

Asking for a link never says whether the address has an account (``reset_request``
returns a link or None for the caller to mail or not, and the pages answer the same
either way). Using it ends every session of the person: whoever knew the old password
is out.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import timedelta

from hub.core.errors import Gone
from hub.core.ids import could_be_an_id
from hub.core.people.account_events import PASSWORD_RESET
from hub.core.people.passwords import require_strong, set_password
from hub.core.people.ratelimit import FailureLimiter
from hub.core.store.models import User
from hub.protocol.clock import utcnow

RESET_TTL = timedelta(minutes=30)
# Each request may send a mail: a few per address keep a mailbox from being flooded, more
# per client address keep one client from mailing a list of strangers.
RESET_REQUESTS_PER_ADDRESS = FailureLimiter(
    per_source=3, overall=1_000, window_s=900.0, code="reset_rate_limited", what="reset requests"
)
RESET_REQUESTS_PER_CLIENT = FailureLimiter(
    per_source=10, overall=1_000, window_s=900.0, code="reset_rate_limited", what="reset requests"
)
# A link's signature is 256 bits, out of reach of guessing; the cap keeps a client that
# tries link after link from costing the hub a lookup and an HMAC each, as logins are capped.
RESET_LINK_FAILURES = FailureLimiter(
    per_source=10, overall=10_000, window_s=60.0, code="reset_link_rate_limited", what="reset links"
)


@dataclass(frozen=True, slots=True)
class ResetMail:
    """A link to mail: to whom, in which language, and the path to put after the hub's URL."""

    user_id: str
    email: str
    display_name: str
    path: str


def reset_path(token: str) -> str:
    return f"/password/reset/{token}"


def reset_token(user: User, secret_key: str, *, ttl: timedelta = RESET_TTL) -> str:
    expires = int((utcnow() + ttl).timestamp())
    return f"{user.id}.{expires}.{_signature(user, expires, secret_key)}"


async def reset_request(email: str, *, secret_key: str, client: str | None) -> ResetMail | None:
    """A reset link to mail to ``email``, or None when it has no account. Raises
    ``RateLimited`` (``reset_rate_limited``) alike for known and unknown addresses."""
    address = email.strip().lower()
    RESET_REQUESTS_PER_CLIENT.check(client)
    RESET_REQUESTS_PER_ADDRESS.check(address)
    RESET_REQUESTS_PER_CLIENT.record_failure(client)
    RESET_REQUESTS_PER_ADDRESS.record_failure(address)
    user = await User.filter(email=address).first()
    if user is None:
        return None
    return ResetMail(
        user.id, user.email, user.display_name, reset_path(reset_token(user, secret_key))
    )


async def open_reset(token: str, *, secret_key: str) -> User:
    """The person a reset link is for; ``Gone`` (``reset_link_invalid``) when it is forged,
    expired or used already."""
    user_id, _, rest = token.partition(".")
    expires_text, _, signature = rest.partition(".")
    user = await User.filter(id=user_id).first() if could_be_an_id(user_id) else None
    if user is None or not expires_text.isdigit():
        raise _gone()
    expires = int(expires_text)
    expected = _signature(user, expires, secret_key)
    if not hmac.compare_digest(expected, signature) or expires <= utcnow().timestamp():
        raise _gone()
    return user


async def reset_password(
    token: str, new_password: str, *, secret_key: str, address: str | None, via: str
) -> int:
    """Set the new password through the link (which then stops working) and end every
    session of the person; how many ended. ``RateLimited`` after many bad links from
    ``address``."""
    require_strong(new_password)
    RESET_LINK_FAILURES.check(address)
    try:
        user = await open_reset(token, secret_key=secret_key)
    except Gone:
        RESET_LINK_FAILURES.record_failure(address)
        raise
    return await set_password(
        user, new_password, keep_session=None, address=address, via=via, kind=PASSWORD_RESET
    )


def _signature(user: User, expires: int, secret_key: str) -> str:
    message = f"password-reset:{user.id}:{expires}:{user.password_hash or ''}"
    return hmac.new(secret_key.encode(), message.encode(), hashlib.sha256).hexdigest()


def _gone() -> Gone:
    return Gone(
        "This reset link is not valid: it expired, was used already, or was never made here.",
        code="reset_link_invalid",
        hint="Ask for a new link on the sign-in page (Forgot your password?).",
    )
