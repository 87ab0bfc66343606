"""Making and checking secrets: API tokens, agent credentials, pairing codes, passwords.

Only hashes are stored. Tokens and credentials are long and random, so one fast SHA-256 is
enough to make a leaked table useless; pairing codes are short enough to try them all, so
they get a hash keyed with the hub's secret; passwords get argon2.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# Crockford's base32 without I, L, O, U: nothing a person can misread when copying a code.
_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PAIRING_CODE_LENGTH = 8
_LOOKALIKES = str.maketrans("OIL", "011")

_passwords = PasswordHasher()


def new_token(prefix: str) -> str:
    """A bearer secret with a prefix that says what it is (and lets secret scanners find it)."""
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_pairing_code() -> str:
    raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(PAIRING_CODE_LENGTH))
    return f"{raw[:4]}-{raw[4:]}"


def normalise_pairing_code(code: str) -> str:
    """Accept what people type: any case, with or without the dash, O for 0, I/L for 1."""
    cleaned = code.strip().upper().replace("-", "").replace(" ", "")
    cleaned = cleaned.translate(_LOOKALIKES)
    return f"{cleaned[:4]}-{cleaned[4:]}" if len(cleaned) == PAIRING_CODE_LENGTH else cleaned


def hash_pairing_code(code: str, secret_key: str) -> str:
    normalised = normalise_pairing_code(code)
    return hmac.new(secret_key.encode(), normalised.encode(), hashlib.sha256).hexdigest()


def hash_password(password: str) -> str:
    return _passwords.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        _passwords.hash(password)  # spend the same time as a real check: no user probing
        return False
    try:
        return _passwords.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
