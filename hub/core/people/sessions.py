"""Sign-in sessions kept by the hub, so that ending one ends it for every copy of its cookie.

A browser's cookie carries only a random key; the ``user_session`` row found by the key's
hash says whose it is and until when. A cookie that merely carried the person's id would
stay good for its whole lifetime wherever it had been copied, signed out or not. Here
signing out deletes the row, and so do the person's own "sign out everywhere else" (a
password change calls ``end_sessions`` with the session to keep) and their removal from
their last workspace.

A session expires after ``SESSION_LIFETIME`` without use. Use is written down at most every
``LAST_SEEN_PRECISION``, pushing the expiry along with it: a write on every request would
serialise a busy browser's requests on SQLite for a fact nobody needs to the second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from tortoise.backends.base.client import BaseDBAsyncClient

from hub.core.ids import new_id
from hub.core.people.credentials import hash_token, new_token
from hub.core.store.models import User, UserSession
from hub.protocol.clock import utcnow

SESSION_LIFETIME = timedelta(days=14)
LAST_SEEN_PRECISION = timedelta(minutes=5)
_USER_AGENT_LENGTH = 300


@dataclass(frozen=True, slots=True)
class SignedIn:
    """Who a session key belongs to, and which session it is (to keep it when ending others)."""

    user: User
    session_id: str


async def open_session(user: User, *, user_agent: str | None) -> str:
    """A new session for ``user``; returns the key for the cookie (shown nowhere else)."""
    now = utcnow()
    # The person's long-expired sessions go when they sign in again: no sweeper needed.
    await UserSession.filter(user_id=user.id, expires_at__lte=now).delete()
    key = new_token("lus")
    await UserSession.create(
        id=new_id("user_session"),
        user_id=user.id,
        key_hash=hash_token(key),
        user_agent=(user_agent or "")[:_USER_AGENT_LENGTH] or None,
        last_seen_at=now,
        expires_at=now + SESSION_LIFETIME,
    )
    return key


async def signed_in(key: str) -> SignedIn | None:
    """The person whose live session ``key`` opens, or None (ended, expired or never was)."""
    now = utcnow()
    row = (
        await UserSession.filter(
            key_hash=hash_token(key), expires_at__gt=now, user__disabled_at__isnull=True
        )
        .select_related("user")
        .first()
    )
    if row is None:
        return None
    if now - row.last_seen_at > LAST_SEEN_PRECISION:
        await UserSession.filter(id=row.id).update(
            last_seen_at=now, expires_at=now + SESSION_LIFETIME
        )
    return SignedIn(row.user, row.id)


async def close_session(key: str) -> User | None:
    """End the session ``key`` opens; its person, or None if it was not open."""
    row = await UserSession.filter(key_hash=hash_token(key)).select_related("user").first()
    if row is None:
        return None
    await UserSession.filter(id=row.id).delete()
    return None if row.expires_at <= utcnow() else row.user


async def end_sessions(
    user_id: str, *, keep: str | None = None, connection: BaseDBAsyncClient | None = None
) -> int:
    """End every session of the person except the one with id ``keep`` (the one asking, for
    a password change); how many ended. ``connection``: the transaction to do it in."""
    query = UserSession.filter(user_id=user_id)
    if keep is not None:
        query = query.exclude(id=keep)
    return int(await query.using_db(connection).delete())
