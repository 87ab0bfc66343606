"""Two-factor sign-in: a time-based code (TOTP, RFC 6238, through ``pyotp``) after the password.

Turning it on is two steps: the hub draws a secret (``new_secret``) that the person adds to
their authenticator app, and only a first right code from that app (``confirm``) stores it,
so a mistyped or unscanned secret never locks anyone out. Confirming also makes ten
recovery codes, shown that once and stored as hashes; each signs in once instead of a code.

A code is accepted for its 30-second step and the one either side (clocks drift), and only
once: the last accepted step is kept, and a code of that step or an earlier one is refused,
so a code seen over someone's shoulder cannot be replayed. Turning it off needs a code (or
a recovery code) too: a borrowed session alone must not remove the second factor.

Wrong codes are capped per account (``CODE_FAILURES``): six digits are a million values.
"""

from __future__ import annotations

import hmac
import secrets

import pyotp

from hub.core.errors import Conflict, Unauthorized
from hub.core.ids import new_id
from hub.core.people.credentials import hash_token
from hub.core.people.ratelimit import FailureLimiter
from hub.core.store.models import RecoveryCode, User
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import utcnow

ISSUER = "LineUp Hub"
RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # no i, l, o, u to misread
CODE_FAILURES = FailureLimiter(
    per_source=5, overall=10_000, window_s=60.0, code="totp_rate_limited", what="sign-in codes"
)


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, email: str) -> str:
    """What the QR code holds: an ``otpauth://`` URI an authenticator app reads."""
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=ISSUER)


def is_on(user: User) -> bool:
    return bool(user.totp_secret)


async def confirm(user: User, secret: str, code: str) -> list[str]:
    """Turn two-factor sign-in on with ``secret`` once ``code`` from it is right; returns the
    recovery codes (shown once). ``Unauthorized`` (``bad_totp_code``) if the code is wrong."""
    if is_on(user):
        raise Conflict(
            "Two-factor sign-in is on already.",
            code="totp_already_on",
            hint="Turn it off first to use another authenticator.",
        )
    step = _matching_step(secret, code, after=0)
    if step is None:
        raise _bad_code()
    codes = ["-".join(_recovery_part() for _ in range(2)) for _ in range(RECOVERY_CODES)]
    async with in_transaction() as connection:
        await (
            User.filter(id=user.id)
            .using_db(connection)
            .update(totp_secret=secret, totp_last_step=step)
        )
        await RecoveryCode.filter(user_id=user.id).using_db(connection).delete()
        for plain in codes:
            await RecoveryCode.create(
                using_db=connection,
                id=new_id("recovery_code"),
                user_id=user.id,
                code_hash=hash_token(_normalise(plain)),
            )
    user.totp_secret, user.totp_last_step = secret, step
    return codes


async def check_code(user: User, code: str) -> None:
    """Accept a current code or an unused recovery code of ``user`` (spending it), or raise
    ``Unauthorized`` (``bad_totp_code``); ``RateLimited`` after too many wrong ones."""
    CODE_FAILURES.check(user.id)
    if await _accept(user, code):
        return
    CODE_FAILURES.record_failure(user.id)
    raise _bad_code()


async def turn_off(user: User, code: str) -> None:
    """Turn two-factor sign-in off, given a code or a recovery code."""
    await check_code(user, code)
    async with in_transaction() as connection:
        await (
            User.filter(id=user.id).using_db(connection).update(totp_secret=None, totp_last_step=0)
        )
        await RecoveryCode.filter(user_id=user.id).using_db(connection).delete()
    user.totp_secret, user.totp_last_step = None, 0


async def recovery_codes_left(user: User) -> int:
    return await RecoveryCode.filter(user_id=user.id).count()


async def _accept(user: User, code: str) -> bool:
    if not user.totp_secret:
        return False
    digits = code.replace(" ", "").strip()
    if digits.isdigit():
        step = _matching_step(user.totp_secret, digits, after=user.totp_last_step)
        if step is None:
            return False
        # Only the request that moves the step on wins: the same code twice at once is one use.
        moved = await User.filter(id=user.id, totp_last_step__lt=step).update(totp_last_step=step)
        user.totp_last_step = step
        return bool(moved)
    spent = await RecoveryCode.filter(
        user_id=user.id, code_hash=hash_token(_normalise(code))
    ).delete()
    return bool(spent)


def _matching_step(secret: str, code: str, *, after: int) -> int | None:
    totp = pyotp.TOTP(secret)
    now = utcnow()
    current = totp.timecode(now)
    for offset in (0, -1, 1):
        step = current + offset
        if step > after and hmac.compare_digest(totp.generate_otp(step), code.strip()):
            return step
    return None


def _recovery_part() -> str:
    return "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(5))


def _normalise(code: str) -> str:
    return code.strip().lower().replace("-", "").replace(" ", "")


def _bad_code() -> Unauthorized:
    return Unauthorized(
        "That code is not right, or was used already.",
        code="bad_totp_code",
        hint="Type the 6 digits your authenticator app shows now, or one of your recovery codes.",
    )
