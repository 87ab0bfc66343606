"""Signed cookie sessions keep one signer per set of keys (hub.host.identity)."""

from __future__ import annotations

from quart import Quart

from hub.host.identity import SignedCookieSessions


def test_one_signer_per_set_of_keys_and_a_new_one_when_they_change() -> None:
    app = Quart(__name__)
    app.secret_key = "first-key-" + "k" * 32
    sessions = SignedCookieSessions()
    signer = sessions.get_signing_serializer(app)
    assert signer is not None and sessions.get_signing_serializer(app) is signer
    token = signer.dumps({"user": "usr_1"})

    app.config["SECRET_KEY_FALLBACKS"] = [app.secret_key]
    app.secret_key = "second-key-" + "k" * 32
    rotated = sessions.get_signing_serializer(app)
    assert rotated is not None and rotated is not signer
    assert rotated.loads(token) == {"user": "usr_1"}  # a cookie of the old key still reads
    assert rotated.loads(rotated.dumps({"n": 1})) == {"n": 1}


def test_no_key_no_sessions() -> None:
    assert SignedCookieSessions().get_signing_serializer(Quart(__name__)) is None
