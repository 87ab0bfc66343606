"""Signing in and out, one session for pages and API, and forms no other site can post."""

from __future__ import annotations

from quart import Quart

from hub.core.store.models import Conversation, Event
from tests.web.pages.conftest import PASSWORD
from tests.web.pages.world import build_world

PAGES = [
    "/",
    "/w/{ws}/inbox",
    "/w/{ws}/conversations",
    "/w/{ws}/conversations/{conversation}",
    "/w/{ws}/tasks",
    "/w/{ws}/tasks/{task}",
    "/w/{ws}/agents",
    "/w/{ws}/agents/connect",
    "/w/{ws}/agents/{agent}",
    "/w/{ws}/interactions/{card}",
    "/w/{ws}/settings",
    # Searched for a word the hostile world's agent text holds, so its results show it.
    "/w/{ws}/search?q=alert",
]


async def test_a_logged_out_request_to_any_page_goes_to_login(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    stranger = app.test_client()
    for pattern in PAGES:
        path = pattern.format(
            ws=ada.workspace_id,
            conversation=world.conversation_id,
            task=world.task_id,
            agent=world.agent.id,
            card=world.cards["choice"],
        )
        response = await stranger.get(path)
        assert response.status_code == 302, path
        assert response.headers["Location"].startswith("/login?next="), path
    # ... and a form post changes nothing.
    response = await stranger.post(
        f"/w/{ada.workspace_id}/conversations", form={"title": "sneaky", "agentIds": "x"}
    )
    assert response.status_code in (302, 403)
    assert not await Conversation.filter(title="sneaky").exists()


async def test_login_takes_you_back_where_you_were_going(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    from hub.core.store.models import User

    email = (await User.get(id=ada.user_id)).email
    again = type(ada)(app.test_client())
    response = await again.client.get(f"/w/{ada.workspace_id}/tasks")
    target = response.headers["Location"]
    status, html = await again.page(target)
    assert status == 200 and 'name="next"' in html
    response = await again.post(
        "/login",
        {"email": email, "password": PASSWORD, "next": f"/w/{ada.workspace_id}/tasks"},
    )
    assert response.headers["Location"] == f"/w/{ada.workspace_id}/tasks"
    # Never off-site after login.
    response = await again.post(
        "/login",
        {"email": email, "password": PASSWORD, "next": "//evil.example/x"},
        token_from=f"/w/{ada.workspace_id}/inbox",
    )
    assert response.headers["Location"] == "/"
    # A wrong password says so, with a diagnostic code.
    response = await again.post(
        "/login",
        {"email": email, "password": "wrong password"},
        token_from=f"/w/{ada.workspace_id}/inbox",
    )
    assert response.status_code == 401
    assert "bad_credentials" in await response.get_data(as_text=True)


async def test_one_session_serves_the_pages_and_the_api(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.client.get("/api/v1/workspaces")
    assert response.status_code == 200
    assert ada.workspace_id in await response.get_data(as_text=True)

    # Signed in through the API: the pages know the person too.
    bob = app.test_client()
    await bob.post(
        "/api/v1/auth/register",
        json={"email": "bob@example.com", "password": PASSWORD, "displayName": "Bob"},
    )
    response = await bob.get("/")
    assert response.status_code == 302 and "/inbox" in response.headers["Location"]

    # Logging out on a page ends the API's session as well.
    await ada.post("/logout", {}, token_from=ada.w("/inbox"))
    assert (await ada.client.get("/api/v1/workspaces")).status_code == 401
    assert (await ada.client.get(ada.w("/inbox"))).status_code == 302


async def test_a_cross_site_form_post_is_refused(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    before = await Event.filter(workspace_id=ada.workspace_id).count()
    respond = ada.w(f"/interactions/{world.cards['choice']}/respond")

    # No token: the cookie alone (as a forged form would send it) is not enough.
    response = await ada.client.post(respond, form={"optionId": "eu"})
    assert response.status_code == 403
    # A wrong token.
    response = await ada.client.post(respond, form={"optionId": "eu", "csrf_token": "guess"})
    assert response.status_code == 403
    # The right token from another origin.
    response = await ada.post(
        respond,
        {"optionId": "eu"},
        token_from=ada.w("/inbox"),
        headers={"Origin": "https://evil.example"},
    )
    assert response.status_code == 403
    assert "csrf_refused" in await response.get_data(as_text=True)
    assert await Event.filter(workspace_id=ada.workspace_id).count() == before

    # The page's own form goes through.
    response = await ada.post(respond, {"optionId": "eu"}, token_from=ada.w("/inbox"))
    assert response.status_code == 302


async def test_another_workspace_reads_as_not_found(browser) -> None:  # type: ignore[no-untyped-def]
    ada, bob = await browser("Ada"), await browser("Bob")
    status, html = await bob.page(f"/w/{ada.workspace_id}/inbox")
    assert status == 404 and "workspace_not_found" in html


async def test_pages_carry_a_strict_content_security_policy(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.client.get(ada.w("/inbox"))
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
    cookie = response.headers.get("Set-Cookie", "")
    html = await response.get_data(as_text=True)
    assert "<script>" not in html  # every script is a file
    assert cookie == "" or "HttpOnly" in cookie
