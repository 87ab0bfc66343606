"""Who may make an account: the hub's sign-up rule (``LINEUP_SIGNUP``).

A fresh hub has nobody to invite anyone, so its first account can always be made, and it
is the hub's admin. After that the rule decides: ``open`` lets anyone in, ``invite`` only
someone holding an invitation, ``closed`` nobody; the admin's ``lineup user create`` is the
operator's own way in and passes no rule.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any

from hub.core.errors import Forbidden
from hub.core.store.models import User

_FIRST_ACCOUNT_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"lineup-first-account").digest()[:7], "big"
)


class Signup(StrEnum):
    OPEN = "open"
    INVITE = "invite"
    CLOSED = "closed"


def check_admission(rule: Signup, *, invited: bool, first_account: bool) -> None:
    """Raise 403 ``invitation_required`` or ``signup_closed`` if ``rule`` keeps them out."""
    if first_account or rule is Signup.OPEN:
        return
    if rule is Signup.CLOSED:
        raise Forbidden(
            "This hub does not take new accounts.",
            code="signup_closed",
            hint="Ask the hub's admin to create an account for you.",
        )
    if not invited:
        raise Forbidden(
            "This hub takes new accounts by invitation only.",
            code="invitation_required",
            hint="Ask a workspace owner for an invitation link, and sign up from it.",
        )


async def is_first_account(connection: Any) -> bool:
    """Whether the account about to be made in ``connection``'s transaction is the hub's
    first (and so its admin), decided for one sign-up at a time: call it first thing in the
    transaction that creates the account.

    Two sign-ups on an empty hub would otherwise both find no account and both make an
    admin: PostgreSQL (read committed) shows neither the other's uncommitted row. There a
    transaction-scoped advisory lock queues them, held until the commit, so the second
    looks only once the first's account is visible. SQLite lets one writer in at a time;
    taking its write lock with a first statement that writes (and changes nothing) makes a
    sign-up in another process wait for the first to commit, instead of both reading an
    empty table.
    """
    if connection.capabilities.dialect == "postgres":
        await connection.execute_query(
            "SELECT pg_advisory_xact_lock($1)", [_FIRST_ACCOUNT_LOCK_KEY]
        )
    else:
        await connection.execute_query("UPDATE user_account SET is_admin = is_admin WHERE 0")
    return not await User.exists(using_db=connection)


async def refusal(rule: Signup, *, invited: bool = False) -> Forbidden | None:
    """The refusal signing up would meet now, or None: a page says so instead of a form."""
    try:
        check_admission(rule, invited=invited, first_account=not await User.exists())
    except Forbidden as error:
        return error
    return None
