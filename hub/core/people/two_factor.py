"""Two-factor sign-in: a time-based code (TOTP, RFC 6238, through ``pyotp``) after the password.

Turning it on is two steps: the hub draws a secret (``new_secret``) that the person adds to
their authenticator app, and only a first right code from that app (``confirm``) stores it,
so a mistyped or unscanned secret never locks anyone out. Confirming also makes ten
recovery codes, shown that once and stored as hashes; each signs in once instead of a code.

A code is accepted for its 30-second step and the one either side (clocks drift), and only
once: the last accepted step is kept, and a code of that step or an earlier one is refused,
so a code seen over someone's shoulder cannot be replayed. Turning it off needs a code, a
recovery code or the password too: a borrowed session alone must not remove the second
factor. Whoever lost both their phone and their recovery codes asks the hub's admin, who can
turn it off for them (``hub.core.people.operator``). Each turn, on or off, is an account
event in the audit trail.

Wrong codes are capped per account (``CODE_FAILURES``): six digits are a million values.

The secret is stored sealed with the hub's secret key (``hub.core.people.sealing``): whoever
reads the database alone cannot make the codes. Each function that reads or stores it is
given the key; a hub whose key changed cannot read it (``totp_secret_unreadable``), and the
person signs in with a recovery code, then turns two-factor off and on again. Hubs before the seal
stored the secret in the clear: ``seal_plain_secrets`` seals those as the hub starts.
"""

from __future__ import annotations

import hmac
import re
import secrets

import pyotp

from hub.core.errors import Conflict, InvalidInput, Unauthorized
from hub.core.ids import new_id
from hub.core.people.account_events import TWO_FACTOR_OFF, TWO_FACTOR_ON, record_two_factor
from hub.core.people.credentials import hash_token
from hub.core.people.passwords import check_current
from hub.core.people.ratelimit import FailureLimiter
from hub.core.people.sealing import SealBroken, seal, unseal
from hub.core.store.models import RecoveryCode, User
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import utcnow

ISSUER = "LineUp Hub"
RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # no i, l, o, u to misread
CODE_FAILURES = FailureLimiter(
    per_source=5, overall=10_000, window_s=60.0, code="totp_rate_limited", what="sign-in codes"
)


# What ``new_secret`` draws: 32 base32 letters, 160 bits (RFC 4226's recommended length).
# A secret sent back to ``confirm`` must look the same, so nobody sets up a guessable one.
_SECRET = re.compile(r"[A-Z2-7]{32}")


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, email: str) -> str:
    """What the QR code holds: an ``otpauth://`` URI an authenticator app reads."""
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=ISSUER)


def is_on(user: User) -> bool:
    return bool(user.totp_secret_sealed)


def already_on() -> Conflict:
    return Conflict(
        "Two-factor sign-in is on already.",
        code="totp_already_on",
        hint="Turn it off first to use another authenticator.",
    )


async def confirm(
    user: User, secret: str, code: str, *, secret_key: str, address: str | None, via: str
) -> list[str]:
    """Turn two-factor sign-in on with ``secret`` once ``code`` from it is right; returns the
    recovery codes (shown once). ``Unauthorized`` (``bad_totp_code``) if the code is wrong.

    ``secret`` comes back from the browser's session or the API client that ``new_secret``
    was shown to; one not shaped like what it draws is refused (``invalid_totp_secret``)."""
    if not _SECRET.fullmatch(secret):
        raise InvalidInput(
            "That is not a two-factor secret this hub made.",
            code="invalid_totp_secret",
            hint="Start the setup again and use the secret it gives.",
        )
    if is_on(user):
        raise already_on()
    step = _matching_step(secret, code, after=0)
    if step is None:
        raise _bad_code()
    codes = ["-".join(_recovery_part() for _ in range(2)) for _ in range(RECOVERY_CODES)]
    sealed = seal(secret, secret_key)
    async with in_transaction() as connection:
        await (
            User.filter(id=user.id)
            .using_db(connection)
            .update(totp_secret_sealed=sealed, totp_last_step=step)
        )
        await RecoveryCode.filter(user_id=user.id).using_db(connection).delete()
        for plain in codes:
            await RecoveryCode.create(
                using_db=connection,
                id=new_id("recovery_code"),
                user_id=user.id,
                code_hash=hash_token(_normalise(plain)),
            )
    user.totp_secret_sealed, user.totp_last_step = sealed, step
    await record_two_factor(user, TWO_FACTOR_ON, address=address, via=via)
    return codes


async def check_code(user: User, code: str, *, secret_key: str) -> None:
    """Accept a current code or an unused recovery code of ``user`` (spending it), or raise
    ``Unauthorized`` (``bad_totp_code``); ``RateLimited`` after too many wrong ones."""
    CODE_FAILURES.check(user.id)
    if await _accept(user, code, secret_key):
        return
    CODE_FAILURES.record_failure(user.id)
    raise _bad_code()


async def turn_off(
    user: User,
    *,
    code: str | None = None,
    password: str | None = None,
    secret_key: str,
    address: str | None,
    via: str,
) -> None:
    """Turn two-factor sign-in off, its recovery codes too, given the person's password
    (403 ``wrong_password``) or a code or recovery code (401 ``bad_totp_code``): a borrowed
    session alone must not do this."""
    if password:
        check_current(user, password)
    elif code:
        await check_code(user, code, secret_key=secret_key)
    else:
        raise InvalidInput(
            "Turning two-factor sign-in off needs your password or a code.",
            code="totp_off_needs_proof",
            hint="Give your password, or a code: your authenticator's or a recovery code.",
        )
    await remove(user, address=address, via=via)


async def remove(user: User, *, address: str | None, via: str) -> None:
    """Turn two-factor sign-in off, its recovery codes too, with no proof asked: for
    ``turn_off`` and for the hub's operator (``hub.core.people.operator``)."""
    async with in_transaction() as connection:
        await (
            User.filter(id=user.id)
            .using_db(connection)
            .update(totp_secret_sealed=None, totp_last_step=0)
        )
        await RecoveryCode.filter(user_id=user.id).using_db(connection).delete()
    user.totp_secret_sealed, user.totp_last_step = None, 0
    await record_two_factor(user, TWO_FACTOR_OFF, address=address, via=via)


async def recovery_codes_left(user: User) -> int:
    return await RecoveryCode.filter(user_id=user.id).count()


async def seal_plain_secrets(secret_key: str) -> int:
    """Seal the secrets a hub before the seal stored in the clear; returns how many.

    Run as the hub starts: the migration that made the column hold sealed secrets cannot,
    not knowing the key. A plain secret is told apart by its form alone (base32 capitals;
    a sealed one is a Fernet token, which starts ``gAAAAA``). Several processes starting at
    once may each seal a row: only the update that still finds it plain writes.
    """
    sealed = 0
    rows = await User.filter(totp_secret_sealed__isnull=False).values_list(
        "id", "totp_secret_sealed"
    )
    for user_id, stored in rows:
        if re.fullmatch(r"[A-Z2-7]+=*", stored):
            sealed += await User.filter(id=user_id, totp_secret_sealed=stored).update(
                totp_secret_sealed=seal(stored, secret_key)
            )
    return sealed


def _secret_of(user: User, secret_key: str) -> str:
    assert user.totp_secret_sealed is not None
    try:
        return unseal(user.totp_secret_sealed, secret_key)
    except SealBroken:
        raise Conflict(
            "The hub cannot read this account's two-factor secret: its secret key changed "
            "since two-factor sign-in was set up.",
            code="totp_secret_unreadable",
            hint="Sign in with one of your recovery codes, then turn two-factor sign-in off "
            "and on again in Settings.",
        ) from None


async def _accept(user: User, code: str, secret_key: str) -> bool:
    if not user.totp_secret_sealed:
        return False
    digits = code.replace(" ", "").strip()
    # Six digits are a code; anything else may be a recovery code (one typed without its
    # hyphen can be all digits, but never six).
    if digits.isdigit() and len(digits) == 6:
        step = _matching_step(_secret_of(user, secret_key), digits, after=user.totp_last_step)
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
