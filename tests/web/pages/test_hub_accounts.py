"""Settings → Accounts on this hub, the admin's page; and the sign-up page under each rule."""

from __future__ import annotations

from pathlib import Path

import pyotp
from quart import Quart

from hub.config import load_settings
from hub.core.people.accounts import authenticate, create_user
from hub.core.people.two_factor import confirm, is_on, new_secret
from hub.core.store.models import User
from hub.host.app import create_app
from hub.host.settings import settings_of
from tests.web.pages.world import SECRET_KEY


async def test_the_admin_disables_enables_and_resets_accounts(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    admin = await browser("Ada")
    bea = await browser("Bea")
    page = admin.w("/settings/accounts")

    status, html = await admin.page(admin.w("/settings"))
    assert "Accounts on this hub" in html
    status, html = await admin.page(page)
    assert status == 200
    assert f'data-account="{bea.user_id}" data-disabled="no"' in html

    status, html = await bea.page(bea.w("/settings"))
    assert "Accounts on this hub" not in html
    status, html = await bea.page(bea.w("/settings/accounts"))
    assert status == 403 and "admins_only" in html
    # Another workspace's page is not found, whoever asks.
    status, _html = await admin.page(bea.w("/settings/accounts"))
    assert status == 404

    response = await admin.post(f"{page}/{bea.user_id}/disable", {}, token_from=page)
    assert response.status_code == 302
    status, html = await admin.page(page)
    assert f'data-account="{bea.user_id}" data-disabled="yes"' in html
    status, _html = await bea.page(bea.w("/settings"))
    assert status == 302  # signed out: the session opens nothing now

    response = await admin.post(f"{page}/{bea.user_id}/enable", {}, token_from=page)
    assert response.status_code == 302
    response = await admin.post(
        f"{page}/{bea.user_id}/password", {"password": "temporary pass"}, token_from=page
    )
    assert response.status_code == 302
    assert (await authenticate((await User.get(id=bea.user_id)).email, "temporary pass")).id

    response = await admin.post(
        f"{page}/{bea.user_id}/password", {"password": "x"}, token_from=page
    )
    assert response.status_code == 422 and "weak_password" in await response.get_data(as_text=True)
    response = await admin.post(f"{page}/{admin.user_id}/disable", {}, token_from=page)
    assert response.status_code == 409 and "last_admin" in await response.get_data(as_text=True)


async def test_the_signup_page_says_why_instead_of_a_form_that_cannot_work(
    db: str, tmp_path: Path
) -> None:
    await create_user("admin@example.com", "admin password")
    for rule, code in (("invite", "invitation_required"), ("closed", "signup_closed")):
        app = create_app(load_settings(data_dir=tmp_path, secret_key=SECRET_KEY, signup=rule))
        response = await app.test_client().get("/signup")
        html = await response.get_data(as_text=True)
        assert response.status_code == 403
        assert code in html and 'name="password"' not in html
    app = create_app(load_settings(data_dir=tmp_path, secret_key=SECRET_KEY, signup="open"))
    response = await app.test_client().get("/signup")
    assert response.status_code == 200 and 'name="password"' in await response.get_data(
        as_text=True
    )


async def test_on_a_closed_hub_an_invitation_is_joined_by_signing_in_only(
    db: str, tmp_path: Path
) -> None:
    from hub.core.people import invitations
    from hub.core.store.models import Role

    admin, workspace = await create_user("admin@example.com", "admin password")
    _invitation, token = await invitations.invite(
        workspace.id, Role.MEMBER, by=admin, secret_key=SECRET_KEY
    )
    app = create_app(load_settings(data_dir=tmp_path, secret_key=SECRET_KEY, signup="closed"))
    response = await app.test_client().get(f"/join/{token}")
    html = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert "signup_closed" in html and 'name="password"' not in html
    assert "/login?next=" in html


async def test_the_admin_turns_off_two_factor_for_someone_locked_out(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    admin = await browser("Ada")
    bea = await browser("Bea")
    page = admin.w("/settings/accounts")
    off_path = f"{page}/{bea.user_id}/two-factor-off"
    status, html = await admin.page(page)
    assert off_path not in html  # nothing to turn off yet
    refused = await admin.post(off_path, {}, token_from=page)
    assert refused.status_code == 409
    assert "totp_already_off" in await refused.get_data(as_text=True)

    secret = new_secret()
    person = await User.get(id=bea.user_id)
    await confirm(
        person,
        secret,
        pyotp.TOTP(secret).now(),
        secret_key=settings_of(app).secret_key,
        address=None,
        via="web",
    )
    status, html = await admin.page(page)
    assert off_path in html
    # Bea's own signed-in browser cannot use the admin's door.
    denied = await bea.post(off_path, {}, token_from=bea.w("/settings"))
    assert denied.status_code == 404
    response = await admin.post(off_path, {}, token_from=page)
    assert response.status_code == 302
    assert not is_on(await User.get(id=bea.user_id))
    status, _html = await bea.page(bea.w("/settings"))
    assert status == 302  # her sessions ended with it
