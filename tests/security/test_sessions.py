"""Sessions: a cookie planted before sign-in never becomes a signed-in one (fixation), and
a cross-site form or API write carrying the person's cookie is refused (CSRF)."""

from __future__ import annotations

import re

from quart import Quart

from hub.host.identity import SESSION_COOKIE_NAME
from tests.security.conftest import Person
from tests.web.api.conftest import PASSWORD


def session_cookie(response) -> str | None:  # type: ignore[no-untyped-def]
    for header in response.headers.getlist("Set-Cookie"):
        match = re.match(rf"{SESSION_COOKIE_NAME}=([^;]*)", header)
        if match:
            return match.group(1)
    return None


async def csrf_of(client, path: str) -> str:  # type: ignore[no-untyped-def]
    html = (await (await client.get(path)).get_data()).decode()
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, f"no CSRF field on {path}"
    return match.group(1)


async def test_the_session_is_renewed_at_sign_in(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    browser = app.test_client()
    token = await csrf_of(browser, "/login")
    before = browser.cookie_jar  # type: ignore[attr-defined]
    planted = next(c.value for c in before if c.name == SESSION_COOKIE_NAME)
    response = await browser.post(
        "/login", form={"email": me.email, "password": PASSWORD, "csrf_token": token}
    )
    assert response.status_code in (302, 303), await response.get_data()
    renewed = session_cookie(response)
    assert renewed and renewed != planted
    # The cookie someone could have planted before sign-in is still nobody's session.
    attacker = app.test_client()
    attacker.set_cookie("localhost", SESSION_COOKIE_NAME, planted)  # type: ignore[attr-defined]
    assert (await attacker.get("/api/v1/workspaces")).status_code == 401
    signed_in = app.test_client()
    signed_in.set_cookie("localhost", SESSION_COOKIE_NAME, renewed)  # type: ignore[attr-defined]
    assert (await signed_in.get("/api/v1/workspaces")).status_code == 200
    # And the form token of the anonymous session does not carry over.
    assert await csrf_of(browser, f"/w/{me.workspace_id}/conversations") != token


async def test_a_cross_site_form_post_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    browser = app.test_client()
    token = await csrf_of(browser, "/login")
    await browser.post(
        "/login", form={"email": me.email, "password": PASSWORD, "csrf_token": token}
    )
    token = await csrf_of(browser, f"/w/{me.workspace_id}/conversations")
    evil = {"Origin": "https://evil.example"}
    # From another site, even with a valid token: refused.
    cross_site = await browser.post("/logout", form={"csrf_token": token}, headers=evil)
    assert cross_site.status_code == 403
    # From this site but without the form's token (a form the attacker wrote): refused.
    tokenless = await browser.post("/logout", form={})
    assert tokenless.status_code == 403
    # The session survived both.
    assert (await browser.get("/api/v1/workspaces")).status_code == 200
    # The JSON API with the cookie from another site: refused, nothing created.
    api = await browser.post(
        f"/api/v1/workspaces/{me.workspace_id}/conversations",
        json={"title": "planted", "agentIds": []},
        headers=evil,
    )
    assert api.status_code == 403
    assert (await api.get_json())["error"]["code"] == "cross_site_request"
    _, listed = await me.get("/conversations")
    assert all(c["title"] != "planted" for c in listed["conversations"])
