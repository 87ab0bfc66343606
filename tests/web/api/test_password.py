"""Changing one's password through the API: the current one is checked, the new one meets
sign-up's rule, and every other session ends while the asking one stays."""

from __future__ import annotations

from quart import Quart

from hub.core.people.passwords import CURRENT_PASSWORD_FAILURES
from tests.web.api.conftest import PASSWORD, Person

NEW_PASSWORD = "a much longer passphrase"


async def _signed_in_client(app: Quart, email: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    client = app.test_client()
    response = await client.post("/api/v1/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, await response.get_data()
    return client


async def test_a_change_keeps_this_session_and_ends_the_others(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    CURRENT_PASSWORD_FAILURES.reset()
    person: Person = await sign_up("ada")
    here = await _signed_in_client(app, person.email)
    elsewhere = await _signed_in_client(app, person.email)

    wrong = await here.post(
        "/api/v1/me/password",
        json={"currentPassword": "not the password", "newPassword": NEW_PASSWORD},
    )
    assert wrong.status_code == 403
    assert (await wrong.get_json())["error"]["code"] == "wrong_password"
    weak = await here.post(
        "/api/v1/me/password", json={"currentPassword": PASSWORD, "newPassword": "short"}
    )
    assert weak.status_code == 422
    assert (await weak.get_json())["error"]["code"] == "weak_password"
    # Neither changed anything: both sessions live, the old password still signs in.
    assert (await elsewhere.get("/api/v1/me")).status_code == 200
    await _signed_in_client(app, person.email)

    changed = await here.post(
        "/api/v1/me/password", json={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}
    )
    assert changed.status_code == 200, await changed.get_data()
    # elsewhere, the check's, and sign-up's own
    assert (await changed.get_json())["sessionsEnded"] == 3
    assert (await here.get("/api/v1/me")).status_code == 200
    assert (await elsewhere.get("/api/v1/me")).status_code == 401
    # The token is no session: it keeps working.
    assert (await person.client.get("/api/v1/me", headers=person.headers)).status_code == 200
    old = await app.test_client().post(
        "/api/v1/auth/login", json={"email": person.email, "password": PASSWORD}
    )
    assert old.status_code == 401
    await _signed_in_client(app, person.email, NEW_PASSWORD)


async def test_guessing_the_current_password_is_capped(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    CURRENT_PASSWORD_FAILURES.reset()
    person: Person = await sign_up("bob")
    codes = []
    for _ in range(6):
        response = await person.client.post(
            "/api/v1/me/password",
            headers=person.headers,
            json={"currentPassword": "a wrong guess", "newPassword": NEW_PASSWORD},
        )
        codes.append((await response.get_json())["error"]["code"])
    assert codes == ["wrong_password"] * 5 + ["password_rate_limited"]
    CURRENT_PASSWORD_FAILURES.reset()
