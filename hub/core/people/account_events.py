"""What happens to a person's account — sign-ins, failed attempts, sign-outs, personal API
tokens created and revoked, passwords changed or reset, two-factor sign-in turned on or
off — recorded in the event log of each
workspace they belong to.

An account has no log of its own, and a second store beside the workspace logs would give
the audit trail two sources to merge and to disagree. Appending the fact to each of the
person's workspaces keeps the trail one view of one log (``hub.core.people.audit``): ordered by
sequence, paged with ``after``, never rewritten, readable by exactly the people who can
already see what this person does there. The cost is one append per workspace per sign-in,
and failed attempts are bounded by the login rate limits (``hub.web.api.auth``).

An entry names the account, the outcome, the client's address and the surface (``web`` or
``api``); never a password, a token's secret or the email typed for an unknown account.
A failed attempt is recorded as done by ``anonymous``: whoever typed the password did not
prove who they are. An attempt on an address without an account has no workspace to record
it in, so it goes to the hub's own log only (``hub.audit``), as every entry here also does.
"""

from __future__ import annotations

import logging
from typing import Any

from hub.core.log.events import append_event
from hub.core.store.models import Membership, User

audit_logger = logging.getLogger("hub.audit")

SIGNED_IN = "account.signed_in"
SIGN_IN_FAILED = "account.sign_in_failed"
SIGNED_OUT = "account.signed_out"
TOKEN_CREATED = "account.token_created"
TOKEN_REVOKED = "account.token_revoked"
PASSWORD_CHANGED = "account.password_changed"
PASSWORD_RESET = "account.password_reset"
TWO_FACTOR_ON = "account.two_factor_on"
TWO_FACTOR_OFF = "account.two_factor_off"
ACCOUNT_EVENT_TYPES = (
    SIGNED_IN,
    SIGN_IN_FAILED,
    SIGNED_OUT,
    TOKEN_CREATED,
    TOKEN_REVOKED,
    PASSWORD_CHANGED,
    PASSWORD_RESET,
    TWO_FACTOR_ON,
    TWO_FACTOR_OFF,
)

ANONYMOUS = "anonymous"


async def record_sign_in(user: User, *, address: str | None, via: str) -> None:
    audit_logger.info("sign-in: user %s from %s via %s", user.id, address or "unknown", via)
    await _record(
        user, SIGNED_IN, actor=_actor(user), outcome="succeeded", address=address, via=via
    )


async def record_failed_sign_in(email: str, *, address: str | None, via: str) -> None:
    """A wrong password (or an unknown address): for the account's owners to see, if any.

    Signing up already tells whether an address has an account, so the extra write for a
    known one reveals nothing new.
    """
    user = await User.filter(email=email.strip().lower()).first()
    audit_logger.info(
        "failed sign-in: %s from %s via %s",
        f"user {user.id}" if user else "no such account",
        address or "unknown",
        via,
    )
    if user is not None:
        await _record(
            user, SIGN_IN_FAILED, actor=ANONYMOUS, outcome="failed", address=address, via=via
        )


async def record_sign_out(user: User, *, address: str | None, via: str) -> None:
    audit_logger.info("sign-out: user %s from %s via %s", user.id, address or "unknown", via)
    await _record(user, SIGNED_OUT, actor=_actor(user), address=address, via=via)


async def record_token_change(
    user: User, kind: str, *, token_id: str, name: str, address: str | None, via: str | None
) -> None:
    """``kind``: ``TOKEN_CREATED`` or ``TOKEN_REVOKED``; ``via`` is ``cli`` for the command
    line, None for code without a client. The token's secret is never passed."""
    audit_logger.info("%s: user %s token %s from %s", kind, user.id, token_id, address or "unknown")
    await _record(
        user, kind, actor=_actor(user), tokenId=token_id, name=name, address=address, via=via
    )


async def record_password_change(
    user: User, kind: str, *, address: str | None, via: str, sessions_ended: int
) -> None:
    """``kind``: ``PASSWORD_CHANGED`` (knowing the old one) or ``PASSWORD_RESET`` (through a
    mailed link); how many sessions it ended. Never the password itself."""
    audit_logger.info("%s: user %s from %s via %s", kind, user.id, address or "unknown", via)
    await _record(
        user, kind, actor=_actor(user), address=address, via=via, sessionsEnded=sessions_ended
    )


async def record_two_factor(user: User, kind: str, *, address: str | None, via: str) -> None:
    """``kind``: ``TWO_FACTOR_ON`` or ``TWO_FACTOR_OFF``; ``via`` is ``operator`` when the
    hub's admin turned it off for the person (they lost both phone and recovery codes)."""
    audit_logger.info("%s: user %s from %s via %s", kind, user.id, address or "unknown", via)
    actor = "operator" if via == "operator" else _actor(user)
    await _record(user, kind, actor=actor, address=address, via=via)


def _actor(user: User) -> str:
    return f"user:{user.id}"


async def _record(user: User, type: str, *, actor: str, **details: Any) -> None:
    payload = {"userId": user.id, **{k: v for k, v in details.items() if v is not None}}
    workspace_ids = await Membership.filter(user_id=user.id).values_list("workspace_id", flat=True)
    for workspace_id in sorted(workspace_ids):
        await append_event(str(workspace_id), type, payload, actor=actor)
