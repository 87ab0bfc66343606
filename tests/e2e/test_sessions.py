"""Sign-in sessions end for real, against `lineup serve` over HTTP.

A browser's cookie is copied before its person signs out; the copy must sign no one in
afterwards, on the JSON API and on the pages. A person removed from their last workspace
is signed out everywhere; ``end_sessions`` (what a password change calls) ends every
session but the one kept, and personal API tokens are not sessions: they keep working.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from hub.core.people import invitations
from hub.core.people.accounts import create_user
from hub.core.people.sessions import end_sessions
from hub.core.store.models import Role, User, UserSession
from tests.sdk.live import LiveHub, live_hub

OWNER_EMAIL, PASSWORD = "owner@example.com", "correct horse"  # what live_hub creates
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


@contextlib.asynccontextmanager
async def signed_in_browser(
    hub: LiveHub, email: str = OWNER_EMAIL
) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=hub.url, timeout=30) as browser:
        answer = await browser.post(
            "/api/v1/auth/login", json={"email": email, "password": PASSWORD}
        )
        assert answer.status_code == 200, answer.text
        yield browser


def copy_of(browser: httpx.AsyncClient) -> httpx.AsyncClient:
    """Another client holding the same cookie, as one copied off the machine would."""
    return httpx.AsyncClient(base_url=browser.base_url, cookies=dict(browser.cookies), timeout=30)


async def me(browser: httpx.AsyncClient) -> int:
    return (await browser.get("/api/v1/me")).status_code


async def inbox_page(browser: httpx.AsyncClient, workspace_id: str) -> int:
    """200 while signed in; a redirect to the login page after."""
    return (await browser.get(f"/w/{workspace_id}/inbox")).status_code


async def test_a_cookie_copied_before_signing_out_through_the_api_is_refused_after(
    hub: LiveHub,
) -> None:
    async with signed_in_browser(hub) as browser, copy_of(browser) as copied:
        assert await me(copied) == 200
        assert await inbox_page(copied, hub.workspace_id) == 200
        assert (await browser.post("/api/v1/auth/logout")).status_code == 204
        assert await me(copied) == 401
        assert await inbox_page(copied, hub.workspace_id) == 302
        assert await me(browser) == 401
    # The personal API token is not a session: it keeps working.
    assert (await hub.http.get("/api/v1/me")).json()["authenticatedBy"] == "token"


async def test_a_cookie_copied_before_signing_out_on_the_pages_is_refused_after(
    hub: LiveHub,
) -> None:
    async with httpx.AsyncClient(base_url=hub.url, timeout=30) as browser:
        shown = await browser.get("/login")
        token = _CSRF.search(shown.text)
        assert token is not None
        form = {"email": OWNER_EMAIL, "password": PASSWORD, "csrf_token": token.group(1)}
        assert (await browser.post("/login", data=form)).status_code == 302
        page = await browser.get(f"/w/{hub.workspace_id}/inbox")
        assert page.status_code == 200
        token = _CSRF.search(page.text)
        assert token is not None
        async with copy_of(browser) as copied:
            assert await inbox_page(copied, hub.workspace_id) == 200
            signed_out = await browser.post("/logout", data={"csrf_token": token.group(1)})
            assert signed_out.status_code == 302
            assert await inbox_page(copied, hub.workspace_id) == 302
            assert await me(copied) == 401


async def test_removal_from_the_last_workspace_ends_the_persons_sessions(hub: LiveHub) -> None:
    owner = await User.get(id=hub.user_id)
    vic, vics_own = await create_user("vic@example.com", PASSWORD, "Vic")
    # Vic joins the owner's workspace, and the owner becomes an owner of Vic's too.
    _, token = await invitations.invite(
        hub.workspace_id, Role.MEMBER, by=owner, secret_key=hub.secret_key
    )
    await invitations.accept(token, vic)
    _, token = await invitations.invite(vics_own.id, Role.OWNER, by=vic, secret_key=hub.secret_key)
    await invitations.accept(token, owner)

    async with signed_in_browser(hub, "vic@example.com") as vics_browser:
        removed = await hub.http.post(
            f"/api/v1/workspaces/{hub.workspace_id}/members/{vic.id}/remove"
        )
        assert removed.status_code == 200, removed.text
        # Vic still has a workspace: signed in, but the one left is gone for them.
        assert await me(vics_browser) == 200
        members = await vics_browser.get(f"/api/v1/workspaces/{hub.workspace_id}/members")
        assert members.status_code == 404
        removed = await hub.http.post(f"/api/v1/workspaces/{vics_own.id}/members/{vic.id}/remove")
        assert removed.status_code == 200, removed.text
        # Nothing left to be signed in for.
        assert await me(vics_browser) == 401
    assert not await UserSession.filter(user_id=vic.id).exists()


async def test_ending_the_other_sessions_keeps_the_one_asked_to_keep(hub: LiveHub) -> None:
    async with signed_in_browser(hub) as laptop, signed_in_browser(hub) as phone:
        sessions = await UserSession.filter(user_id=hub.user_id).order_by("created_at", "id")
        assert len(sessions) == 2
        kept = sessions[0].id  # the laptop's: it signed in first
        assert await end_sessions(hub.user_id, keep=kept) == 1
        assert await me(laptop) == 200
        assert await me(phone) == 401
        assert await end_sessions(hub.user_id) == 1
        assert await me(laptop) == 401
    assert (await hub.http.get("/api/v1/me")).status_code == 200
