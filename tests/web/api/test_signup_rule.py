"""The hub's sign-up rule through ``POST /api/v1/auth/register``: the first account is the
admin whatever the rule; then ``invite`` admits only invitation holders, ``closed`` nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quart import Quart

from hub.config import load_settings
from hub.core.store.models import Membership, User
from hub.host.app import create_app
from tests.web.api.conftest import PASSWORD


def _app(tmp_path: Path, signup: str) -> Quart:
    return create_app(
        load_settings(
            data_dir=tmp_path,
            secret_key="signup-test-secret-" + "k" * 32,
            public_url="http://hub.example.test",
            signup=signup,
        )
    )


async def _register(app: Quart, email: str, **extra: Any) -> tuple[int, Any]:
    response = await app.test_client().post(
        "/api/v1/auth/register", json={"email": email, "password": PASSWORD, **extra}
    )
    return response.status_code, await response.get_json()


async def test_invite_admits_the_first_account_as_admin_then_only_invitation_holders(
    db: str, tmp_path: Path
) -> None:
    app = _app(tmp_path, "invite")
    status, admin = await _register(app, "admin@example.com")
    assert status == 201
    assert (await User.get(id=admin["userId"])).is_admin

    status, refused = await _register(app, "stranger@example.com")
    assert status == 403
    assert refused["error"]["code"] == "invitation_required"
    assert "invitation" in refused["error"]["hint"]
    assert not await User.filter(email="stranger@example.com").exists()

    client = app.test_client()
    await client.post(
        "/api/v1/auth/login", json={"email": "admin@example.com", "password": PASSWORD}
    )
    made = await client.post(
        f"/api/v1/workspaces/{admin['workspaceId']}/invitations", json={"role": "member"}
    )
    token = (await made.get_json())["url"].rsplit("/", 1)[1]
    status, invited = await _register(app, "invited@example.com", invitation=token)
    assert status == 201, invited
    newcomer = await User.get(id=invited["userId"])
    assert not newcomer.is_admin
    assert await Membership.filter(user_id=newcomer.id, workspace_id=admin["workspaceId"]).exists()
    # The link is spent: it admits nobody else.
    status, again = await _register(app, "second@example.com", invitation=token)
    assert status == 410 and again["error"]["code"] == "invitation_invalid"


async def test_closed_admits_nobody_after_the_first_account(db: str, tmp_path: Path) -> None:
    app = _app(tmp_path, "closed")
    assert (await _register(app, "admin@example.com"))[0] == 201
    status, refused = await _register(app, "stranger@example.com")
    assert status == 403
    assert refused["error"]["code"] == "signup_closed"
    assert refused["error"]["hint"] == "Ask the hub's admin to create an account for you."


async def test_open_admits_anyone_and_only_the_first_is_admin(db: str, tmp_path: Path) -> None:
    app = _app(tmp_path, "open")
    first = (await _register(app, "a@example.com"))[1]
    second = (await _register(app, "b@example.com"))[1]
    assert (await User.get(id=first["userId"])).is_admin
    assert not (await User.get(id=second["userId"])).is_admin
