"""What the hub's operator does to accounts: list them, disable or enable one, set a
temporary password, and turn off two-factor sign-in for someone who lost both their phone
and their recovery codes. The ``lineup user`` commands and the admin page both come here.

Disabling ends the person's sessions at once; their API tokens stay stored but open
nothing while the account is disabled (``user_for_token`` refuses them), so enabling the
account again gives back the tokens its scripts use.
"""

from __future__ import annotations

from typing import Any

from hub.core.errors import Conflict, Forbidden
from hub.core.people import passwords, two_factor
from hub.core.people.account_events import PASSWORD_RESET
from hub.core.people.sessions import end_sessions
from hub.core.store.models import User
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import iso, utcnow


def user_view(user: User) -> dict[str, Any]:
    return {
        "userId": user.id,
        "email": user.email,
        "displayName": user.display_name,
        "isAdmin": user.is_admin,
        "twoFactor": two_factor.is_on(user),
        "disabledAt": iso(user.disabled_at),
        "createdAt": iso(user.created_at),
    }


async def list_users() -> list[User]:
    return await User.all().order_by("created_at", "id")


def ensure_admin(user: User) -> None:
    if not user.is_admin:
        raise Forbidden(
            "Only the hub's admin can manage accounts.",
            code="admins_only",
            hint="Ask the hub's admin.",
        )


async def set_password(user: User, password: str) -> None:
    """Give ``user`` a (temporary) password and end their sessions: whoever held the old
    one is signed out everywhere. Recorded as a reset, by the operator."""
    await passwords.set_password(
        user, password, keep_session=None, address=None, via="operator", kind=PASSWORD_RESET
    )


async def turn_off_two_factor(user: User) -> None:
    """Turn ``user``'s two-factor sign-in off and end their sessions: the way back in for
    someone with neither their authenticator nor a recovery code, once the admin knows it
    is them. Whoever held a session then must sign in again, with the password alone."""
    if not two_factor.is_on(user):
        raise Conflict(
            "Two-factor sign-in is off for this account already.",
            code="totp_already_off",
            hint="Nothing to do: they sign in with their password.",
        )
    await two_factor.remove(user, address=None, via="operator")
    await end_sessions(user.id)


async def set_disabled(user: User, disabled: bool) -> User:
    """Disable (ending every session) or enable ``user``; the hub keeps an enabled admin."""
    if disabled and user.is_admin:
        others = await User.filter(is_admin=True, disabled_at__isnull=True).exclude(id=user.id)
        if not others:
            raise Conflict(
                "This is the hub's only admin.",
                code="last_admin",
                hint="Nobody could manage accounts after this; keep it enabled.",
            )
    async with in_transaction() as connection:
        await (
            User.filter(id=user.id)
            .using_db(connection)
            .update(disabled_at=utcnow() if disabled else None)
        )
        if disabled:
            await end_sessions(user.id, connection=connection)
    return await User.get(id=user.id)
