"""The hub's VAPID key pair (RFC 8292): how push services know the pushes are the hub's.

Made once, on first start, and kept beside the secret key in the data folder
(``vapid_private.pem``, mode 0600). Browsers subscribe with its public half, so a push
service takes pushes for those subscriptions only when they are signed with this key.
Rotating it (``lineup push rotate-keys``) therefore ends every subscription: each browser
turns push on again from Settings. Several hub processes serving one database must share
this file, as they share the secret key.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02

FILE_NAME = "vapid_private.pem"


def key_path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def load_or_create(data_dir: Path) -> Vapid02:
    """The hub's key, made and stored (0600) the first time."""
    path = key_path(data_dir)
    if path.exists():
        return Vapid02.from_pem(path.read_bytes())
    return _create(path)


def rotate(data_dir: Path) -> Vapid02:
    """A new key in place of the old one."""
    path = key_path(data_dir)
    path.unlink(missing_ok=True)
    return _create(path)


def public_key(vapid: Vapid02) -> str:
    """The public key as browsers take it (``applicationServerKey``): the uncompressed
    P-256 point in base64url, unpadded."""
    raw = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _create(path: Path) -> Vapid02:
    vapid = Vapid02()
    vapid.generate_keys()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Made private from the start: written to a file opened 0600, never chmod-ed after.
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(vapid.private_pem())
    try:
        # A second process starting at the same moment keeps the first one's key.
        os.link(temporary, path)
    except FileExistsError:
        return Vapid02.from_pem(path.read_bytes())
    finally:
        temporary.unlink()
    return vapid
