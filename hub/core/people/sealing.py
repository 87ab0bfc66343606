"""Secrets the hub must use again later, sealed with its secret: a remote agent's API key,
a person's two-factor (TOTP) secret.

Hashes serve for what the hub only has to recognise (agent credentials, tokens); a remote
agent's key must be sent again on every call, and a TOTP secret makes each code the hub
checks, so they are encrypted instead: a copy of the database (a backup kept without the
secret key, a stolen disk) gives neither away. Fernet
(``cryptography``) is authenticated encryption with a versioned token format that the
``cryptography`` maintainers keep; a hand-rolled AES construction would be one more thing to
get wrong. Its key is derived from ``secret_key`` with HKDF under a purpose label, so the
same secret never serves both as a signing key and as an encryption key.

Changing ``secret_key`` makes sealed values unreadable: ``unseal`` raises ``SealBroken``, and
the owner enters the secret again (each use says how).
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from hub.core.errors import Conflict

_PURPOSE = b"lineup-hub sealed secrets v1"


class SealBroken(Conflict):
    code = "sealed_secret_unreadable"
    hint = "The hub's secret key changed since this secret was stored: enter it again."


def _fernet(secret_key: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(
        secret_key.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


def seal(plaintext: str, secret_key: str) -> str:
    return _fernet(secret_key).encrypt(plaintext.encode()).decode()


def unseal(sealed: str, secret_key: str) -> str:
    try:
        return _fernet(secret_key).decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise SealBroken("A stored secret cannot be decrypted with the hub's key.") from None


__all__ = ["SealBroken", "seal", "unseal"]
