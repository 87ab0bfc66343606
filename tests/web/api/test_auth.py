"""Sign up, log in and out, the session cookie, personal API tokens."""

from __future__ import annotations

from quart import Quart

from tests.web.api.conftest import PASSWORD, Person


async def test_register_signs_in_with_a_hardened_cookie(app: Quart) -> None:
    client = app.test_client()
    response = await client.post(
        "/api/v1/auth/register",
        json={"email": "Ada@Example.com", "password": PASSWORD, "displayName": "Ada"},
    )
    assert response.status_code == 201
    body = await response.get_json()
    assert body["userId"].startswith("usr_") and body["workspaceId"].startswith("ws_")
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("lineup_session=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    me = await client.get("/api/v1/me")
    assert me.status_code == 200
    assert (await me.get_json())["email"] == "ada@example.com"
    assert (await me.get_json())["authenticatedBy"] == "session"


async def test_the_cookie_is_secure_behind_https(db: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hub.config import load_settings
    from hub.host.app import create_app

    app = create_app(
        load_settings(data_dir=tmp_path, secret_key="s" * 40, public_url="https://hub.example")
    )
    response = await app.test_client().post(
        "/api/v1/auth/register", json={"email": "b@example.com", "password": PASSWORD}
    )
    assert "Secure" in response.headers["Set-Cookie"]


async def test_register_refuses_taken_emails_and_weak_passwords(app: Quart) -> None:
    client = app.test_client()
    first = await client.post(
        "/api/v1/auth/register", json={"email": "c@example.com", "password": PASSWORD}
    )
    assert first.status_code == 201
    again = await client.post(
        "/api/v1/auth/register", json={"email": "C@example.com", "password": PASSWORD}
    )
    assert again.status_code == 409
    assert (await again.get_json())["error"]["code"] == "email_taken"
    weak = await client.post(
        "/api/v1/auth/register", json={"email": "d@example.com", "password": "short"}
    )
    assert weak.status_code == 422
    assert (await weak.get_json())["error"]["code"] == "weak_password"
    bad_email = await client.post(
        "/api/v1/auth/register", json={"email": "not an email", "password": PASSWORD}
    )
    assert (await bad_email.get_json())["error"]["code"] == "invalid_email"


async def test_login_logout(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    person: Person = await sign_up("eve")
    client = app.test_client()
    wrong = await client.post(
        "/api/v1/auth/login", json={"email": person.email, "password": "wrong password"}
    )
    assert wrong.status_code == 401
    assert (await wrong.get_json())["error"]["code"] == "bad_credentials"
    assert (await client.get("/api/v1/me")).status_code == 401
    right = await client.post(
        "/api/v1/auth/login", json={"email": person.email.upper(), "password": PASSWORD}
    )
    assert right.status_code == 200
    body = await right.get_json()
    assert body["userId"] == person.user_id and body["workspaceIds"] == [person.workspace_id]
    assert "HttpOnly" in right.headers["Set-Cookie"]
    assert (await client.get("/api/v1/workspaces")).status_code == 200
    assert (await client.post("/api/v1/auth/logout")).status_code == 204
    after = await client.get("/api/v1/workspaces")
    assert after.status_code == 401
    assert (await after.get_json())["error"]["code"] == "not_signed_in"


async def test_repeated_failed_logins_are_slowed_down(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    person: Person = await sign_up()
    client = app.test_client()
    for _ in range(10):
        response = await client.post(
            "/api/v1/auth/login", json={"email": person.email, "password": "guess"}
        )
        assert response.status_code == 401
    limited = await client.post(
        "/api/v1/auth/login", json={"email": person.email, "password": PASSWORD}
    )
    assert limited.status_code == 429
    assert (await limited.get_json())["error"]["code"] == "login_rate_limited"


async def test_tokens_are_shown_once_listed_and_revoked(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    person: Person = await sign_up()
    client, headers = person.client, person.headers
    created = await client.post("/api/v1/auth/tokens", json={"name": "notebook"}, headers=headers)
    assert created.status_code == 201
    token = await created.get_json()
    assert token["token"].startswith("lu_pat_") and token["name"] == "notebook"
    listed = await (await client.get("/api/v1/auth/tokens", headers=headers)).get_json()
    assert {t["name"] for t in listed["tokens"]} == {"tests", "notebook"}
    assert all("token" not in t for t in listed["tokens"])
    mine = {"Authorization": f"Bearer {token['token']}"}
    me = await (await client.get("/api/v1/me", headers=mine)).get_json()
    assert me["authenticatedBy"] == "token"
    revoked = await client.post(f"/api/v1/auth/tokens/{token['id']}/revoke", headers=headers)
    assert revoked.status_code == 200 and (await revoked.get_json())["revokedAt"]
    refused = await client.get("/api/v1/me", headers=mine)
    assert refused.status_code == 401
    assert (await refused.get_json())["error"]["code"] == "invalid_token"
    # Nobody revokes another person's token.
    other: Person = await sign_up()
    theirs = await client.post(f"/api/v1/auth/tokens/{token['id']}/revoke", headers=other.headers)
    assert theirs.status_code == 404


async def test_a_cross_site_cookie_request_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    person: Person = await sign_up()
    client = app.test_client()
    await client.post("/api/v1/auth/login", json={"email": person.email, "password": PASSWORD})
    url = f"/api/v1/workspaces/{person.workspace_id}/pairing-codes"
    evil = await client.post(url, headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
    assert (await evil.get_json())["error"]["code"] == "cross_site_request"
    own = await client.post(url, headers={"Origin": "http://hub.example.test"})
    assert own.status_code == 201
    # Reading is not a cross-site risk the cookie needs guarding against.
    assert (
        await client.get("/api/v1/workspaces", headers={"Origin": "https://evil.example"})
    ).status_code == 200
