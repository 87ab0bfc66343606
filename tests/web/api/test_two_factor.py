"""Two-factor sign-in through the JSON API, with codes computed by pyotp as an
authenticator app would: ``totp_required``, then the code; each code and each recovery code
good once."""

from __future__ import annotations

import time

import pyotp
from quart import Quart

from hub.core.people.two_factor import CODE_FAILURES, confirm, new_secret
from hub.core.store.models import Event, User
from hub.host.settings import settings_of
from tests.web.api.conftest import PASSWORD, Person


async def _login(app: Quart, email: str, **extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    response = await app.test_client().post(
        "/api/v1/auth/login", json={"email": email, "password": PASSWORD, **extra}
    )
    return response.status_code, await response.get_json()


async def test_sign_in_asks_for_the_code_after_the_password(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    CODE_FAILURES.reset()
    person: Person = await sign_up("ada")
    user = await User.get(id=person.user_id)
    secret = new_secret()
    authenticator = pyotp.TOTP(secret)
    assert (await _bad_confirm(user, secret, settings_of(app).secret_key)) == "bad_totp_code"
    first_code = authenticator.now()
    recovery = await confirm(
        user, secret, first_code, secret_key=settings_of(app).secret_key, address=None, via="api"
    )
    assert len(recovery) == 10 and len(set(recovery)) == 10

    status, body = await _login(app, person.email)
    assert status == 401 and body["error"]["code"] == "totp_required"
    status, body = await _login(app, person.email, totpCode="000000")
    assert status == 401 and body["error"]["code"] == "bad_totp_code"
    # The code that confirmed the setup is spent: its step was the last accepted.
    status, body = await _login(app, person.email, totpCode=first_code)
    assert status == 401 and body["error"]["code"] == "bad_totp_code"
    # The next step's code (a phone's clock a little ahead) signs in, once.
    ahead = authenticator.at(time.time() + 30)
    status, body = await _login(app, person.email, totpCode=ahead)
    assert status == 200 and body["userId"] == person.user_id
    status, body = await _login(app, person.email, totpCode=ahead)
    assert status == 401 and body["error"]["code"] == "bad_totp_code"

    status, body = await _login(app, person.email, totpCode=recovery[0].upper())
    assert status == 200 and body["userId"] == person.user_id
    status, body = await _login(app, person.email, totpCode=recovery[0])
    assert status == 401 and body["error"]["code"] == "bad_totp_code"
    # A wrong password is still a wrong password, code or not.
    response = await app.test_client().post(
        "/api/v1/auth/login",
        json={"email": person.email, "password": "not it at all", "totpCode": recovery[1]},
    )
    assert (await response.get_json())["error"]["code"] == "bad_credentials"
    # Every wrong code is a failed sign-in in the audit trail, as a wrong password is.
    failed = await Event.filter(
        workspace_id=person.workspace_id, type="account.sign_in_failed"
    ).count()
    assert failed == 5  # four wrong or spent codes, and the wrong password
    CODE_FAILURES.reset()


async def _bad_confirm(user: User, secret: str, secret_key: str) -> str:
    from hub.core.errors import HubError

    wrong = "123456" if pyotp.TOTP(secret).now() != "123456" else "654321"
    try:
        await confirm(user, secret, wrong, secret_key=secret_key, address=None, via="api")
    except HubError as error:
        return error.code
    return "accepted"


async def test_set_up_and_turn_off_through_the_api(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    CODE_FAILURES.reset()
    person: Person = await sign_up("grace")

    async def call(path: str, body: dict | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
        if body is None and path.endswith("two-factor"):
            response = await person.client.get(f"/api/v1/me/{path}", headers=person.headers)
        else:
            response = await person.client.post(
                f"/api/v1/me/{path}", json=body or {}, headers=person.headers
            )
        return response.status_code, await response.get_json()

    assert await call("two-factor") == (200, {"enabled": False, "recoveryCodesLeft": 0})
    status, setup = await call("two-factor/setup")
    assert status == 200 and setup["otpauthUri"].startswith("otpauth://totp/")
    secret = setup["secret"]
    assert f"secret={secret}" in setup["otpauthUri"]
    authenticator = pyotp.TOTP(secret)
    assert await call("two-factor") == (200, {"enabled": False, "recoveryCodesLeft": 0})

    status, body = await call("two-factor/confirm", {"secret": "AAAA", "code": "123456"})
    assert status == 422 and body["error"]["code"] == "invalid_totp_secret"
    wrong = "123456" if authenticator.now() != "123456" else "654321"
    status, body = await call("two-factor/confirm", {"secret": secret, "code": wrong})
    assert status == 401 and body["error"]["code"] == "bad_totp_code"
    status, body = await call("two-factor/confirm", {"secret": secret, "code": authenticator.now()})
    assert status == 201 and len(body["recoveryCodes"]) == 10
    codes = body["recoveryCodes"]
    stored = (await User.get(id=person.user_id)).totp_secret_sealed
    assert stored is not None and secret not in stored  # sealed, never the plain secret
    assert await call("two-factor") == (200, {"enabled": True, "recoveryCodesLeft": 10})
    status, body = await call("two-factor/setup")
    assert status == 409 and body["error"]["code"] == "totp_already_on"

    status, body = await call("two-factor/disable")
    assert status == 422 and body["error"]["code"] == "totp_off_needs_proof"
    status, body = await call("two-factor/disable", {"password": "not the password"})
    assert status == 403 and body["error"]["code"] == "wrong_password"
    status, body = await call("two-factor/disable", {"code": "000000"})
    assert status == 401 and body["error"]["code"] == "bad_totp_code"
    assert await call("two-factor/disable", {"code": codes[0]}) == (
        200,
        {"enabled": False, "recoveryCodesLeft": 0},
    )
    status, _ = await _login(app, person.email)
    assert status == 200  # the password alone signs in again

    status, setup = await call("two-factor/setup")
    again = pyotp.TOTP(setup["secret"])
    status, _ = await call("two-factor/confirm", {"secret": setup["secret"], "code": again.now()})
    assert status == 201
    status, body = await call("two-factor/disable", {"password": PASSWORD})
    assert status == 200 and body["enabled"] is False
    assert (await User.get(id=person.user_id)).totp_secret_sealed is None
    CODE_FAILURES.reset()
