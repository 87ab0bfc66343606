"""Sign-in sessions: what a key opens, when use is written down, and when a session ends."""

from __future__ import annotations

from hub.core.people.accounts import create_user
from hub.core.people.credentials import hash_token
from hub.core.people.sessions import (
    LAST_SEEN_PRECISION,
    SESSION_LIFETIME,
    close_session,
    open_session,
    signed_in,
)
from hub.core.store.models import UserSession
from hub.protocol.clock import utcnow


async def test_the_row_keeps_only_a_hash_of_the_key_and_the_browser(db: str) -> None:
    user, _ = await create_user("a@example.com", "correct horse")
    key = await open_session(user, user_agent="Firefox/140 " + "x" * 400)
    row = await UserSession.get(user_id=user.id)
    assert row.key_hash == hash_token(key) and key not in row.key_hash
    assert row.user_agent is not None and row.user_agent.startswith("Firefox/140")
    assert len(row.user_agent) == 300
    found = await signed_in(key)
    assert found is not None and found.user.id == user.id and found.session_id == row.id
    assert await signed_in(key + "x") is None


async def test_use_is_written_at_most_once_per_precision_and_moves_the_expiry(db: str) -> None:
    user, _ = await create_user("b@example.com", "correct horse")
    key = await open_session(user, user_agent=None)
    first = await UserSession.get(user_id=user.id)
    assert await signed_in(key) is not None
    assert (await UserSession.get(id=first.id)).last_seen_at == first.last_seen_at  # no write

    a_while_ago = utcnow() - LAST_SEEN_PRECISION * 2
    await UserSession.filter(id=first.id).update(
        last_seen_at=a_while_ago, expires_at=a_while_ago + SESSION_LIFETIME
    )
    assert await signed_in(key) is not None
    seen = await UserSession.get(id=first.id)
    assert seen.last_seen_at > a_while_ago
    assert seen.expires_at > a_while_ago + SESSION_LIFETIME


async def test_an_expired_session_opens_nothing_and_closing_it_is_not_a_sign_out(db: str) -> None:
    user, _ = await create_user("c@example.com", "correct horse")
    key = await open_session(user, user_agent=None)
    await UserSession.filter(user_id=user.id).update(expires_at=utcnow())
    assert await signed_in(key) is None
    assert await close_session(key) is None
    assert not await UserSession.filter(user_id=user.id).exists()


async def test_signing_in_again_clears_the_persons_expired_sessions(db: str) -> None:
    user, _ = await create_user("d@example.com", "correct horse")
    old = await open_session(user, user_agent=None)
    await UserSession.filter(key_hash=hash_token(old)).update(expires_at=utcnow())
    live = await open_session(user, user_agent=None)
    rows = await UserSession.filter(user_id=user.id)
    assert [r.key_hash for r in rows] == [hash_token(live)]
    closed = await close_session(live)
    assert closed is not None and closed.id == user.id
    assert await signed_in(live) is None
