"""Changing a password: the one rule a new password must meet, and what a change ends.

A new password, whether chosen at sign-up, in Settings or through a reset link, meets the
same rule (``require_strong``). Changing it proves the person knows the current one —
a session left open on a shared machine must not be enough to take the account over — and
ends every other session: whoever else held one (a stolen cookie, a forgotten browser) is
out. The session that asked is kept, so the person is not signed out of their own change.
"""

from __future__ import annotations

from hub.core.errors import Forbidden, InvalidInput
from hub.core.people.account_events import PASSWORD_CHANGED, record_password_change
from hub.core.people.credentials import hash_password, verify_password
from hub.core.people.ratelimit import FailureLimiter
from hub.core.people.sessions import end_sessions
from hub.core.store.models import User
from hub.core.store.transactions import in_transaction

MIN_PASSWORD_LENGTH = 8
# A session is already signed in, so this caps someone guessing from a borrowed session
# rather than from the internet: per account, a handful a minute.
CURRENT_PASSWORD_FAILURES = FailureLimiter(
    per_source=5,
    overall=10_000,
    window_s=60.0,
    code="password_rate_limited",
    what="current passwords",
)


def require_strong(password: str) -> None:
    """Refuse a password too short to be one (``weak_password``)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInput(
            f"A password needs at least {MIN_PASSWORD_LENGTH} characters.", code="weak_password"
        )


async def set_password(
    user: User,
    new_password: str,
    *,
    keep_session: str | None,
    address: str | None,
    via: str,
    kind: str = PASSWORD_CHANGED,
) -> int:
    """Store ``new_password`` for ``user`` and end their sessions but ``keep_session``
    (None: all of them); how many ended. Recorded in the audit trail as ``kind``."""
    require_strong(new_password)
    password_hash = hash_password(new_password)
    async with in_transaction() as connection:
        await User.filter(id=user.id).using_db(connection).update(password_hash=password_hash)
        ended = await end_sessions(user.id, keep=keep_session, connection=connection)
    user.password_hash = password_hash
    await record_password_change(user, kind, address=address, via=via, sessions_ended=ended)
    return ended


async def change_password(
    user: User,
    current_password: str,
    new_password: str,
    *,
    keep_session: str | None,
    address: str | None,
    via: str,
) -> int:
    """The person's own change: ``current_password`` must be right (``wrong_password``,
    and nothing changes), ``new_password`` strong enough. Returns how many sessions ended."""
    check_current(user, current_password)
    return await set_password(
        user, new_password, keep_session=keep_session, address=address, via=via
    )


def check_current(user: User, password: str) -> None:
    """A signed-in person proving they know their password before a change a borrowed
    session must not make: 403 ``wrong_password`` (nothing changes), capped per account."""
    CURRENT_PASSWORD_FAILURES.check(user.id)
    if not verify_password(user.password_hash, password):
        CURRENT_PASSWORD_FAILURES.record_failure(user.id)
        raise Forbidden(
            "The password is not right; nothing was changed.",
            code="wrong_password",
            hint="Type the password you sign in with now.",
        )
