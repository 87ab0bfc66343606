"""Settings: notification preferences (the core's, shared with every channel) and tokens."""

from __future__ import annotations

import re

from hub.core.notify.preferences import get_preferences


async def test_notification_preferences_are_the_persons_own(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/inbox"))
    assert 'data-notify="waiting failed"' in html  # the defaults: both, in this browser

    response = await ada.post(
        ada.w("/settings/notifications"),
        {"web:failed": "on", "quiet_start": "", "quiet_end": ""},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 302
    preferences = await get_preferences(ada.user_id)
    assert preferences["surfaces"]["web"] == {"waiting": False, "failed": True}
    _status, html = await ada.page(ada.w("/inbox"))
    assert 'data-notify="failed"' in html

    response = await ada.post(
        ada.w("/settings/notifications"),
        {"web:waiting": "on", "quiet_start": "22:00", "quiet_end": "22:00"},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 422  # start and end must differ
    assert (await get_preferences(ada.user_id))["quietHours"] is None

    response = await ada.post(
        ada.w("/settings/preferences"),
        {"language": "zh_Hans", "time_zone": "Asia/Shanghai"},
        token_from=ada.w("/settings"),
    )
    preferences = await get_preferences(ada.user_id)
    assert preferences["language"] == "zh-Hans" and preferences["timezone"] == "Asia/Shanghai"


async def test_a_token_is_shown_once_and_can_be_revoked(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.post(
        ada.w("/settings/tokens"), {"name": "notebook"}, token_from=ada.w("/settings")
    )
    html = await response.get_data(as_text=True)
    assert response.status_code == 201
    secret = re.search(r'<code id="new-token">([^<]+)</code>', html)
    assert secret is not None
    api = await ada.client.get(
        "/api/v1/workspaces", headers={"Authorization": f"Bearer {secret.group(1)}"}
    )
    assert api.status_code == 200
    _status, html = await ada.page(ada.w("/settings"))
    assert secret.group(1) not in html and "notebook" in html

    token_id = re.search(r"/settings/tokens/([^/]+)/revoke", html)
    assert token_id is not None
    response = await ada.post(
        ada.w(f"/settings/tokens/{token_id.group(1)}/revoke"), {}, token_from=ada.w("/settings")
    )
    assert response.status_code == 302
    api = await ada.client.get(
        "/api/v1/workspaces", headers={"Authorization": f"Bearer {secret.group(1)}"}
    )
    assert api.status_code == 401


async def test_the_password_form_changes_it_and_signs_out_other_browsers(app, browser) -> None:  # type: ignore[no-untyped-def]
    from hub.core.people.passwords import CURRENT_PASSWORD_FAILURES
    from hub.core.store.models import User
    from tests.web.pages.conftest import PASSWORD, Browser

    CURRENT_PASSWORD_FAILURES.reset()
    ada = await browser("Ada")
    email = (await User.get(id=ada.user_id)).email
    other = Browser(app.test_client(), ada.user_id, ada.workspace_id)
    response = await other.post("/login", {"email": email, "password": PASSWORD})
    assert response.status_code == 302

    differ = await ada.post(
        ada.w("/settings/password"),
        {"current_password": PASSWORD, "new_password": "new pass 1", "repeat_password": "x"},
        token_from=ada.w("/settings"),
    )
    assert differ.status_code == 422
    assert "passwords_differ" in await differ.get_data(as_text=True)
    wrong = await ada.post(
        ada.w("/settings/password"),
        {"current_password": "nope", "new_password": "new pass 1", "repeat_password": "new pass 1"},
        token_from=ada.w("/settings"),
    )
    assert wrong.status_code == 403
    assert "wrong_password" in await wrong.get_data(as_text=True)
    assert (await other.page(ada.w("/settings")))[0] == 200

    changed = await ada.post(
        ada.w("/settings/password"),
        {
            "current_password": PASSWORD,
            "new_password": "new pass 1",
            "repeat_password": "new pass 1",
        },
        token_from=ada.w("/settings"),
    )
    assert changed.status_code == 302
    status, html = await ada.page(ada.w("/settings"))
    assert status == 200 and "Password changed" in html
    assert (await other.page(ada.w("/settings")))[0] == 302  # sent to the login page
