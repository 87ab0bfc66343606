"""``lineup user list | set-password | two-factor-off | disable | enable``: the operator's
commands, run as real processes on the configured database."""

from __future__ import annotations

import json
from pathlib import Path

import pyotp
import pytest

from hub.core.errors import Forbidden, Unauthorized
from hub.core.people.accounts import authenticate, create_api_token, create_user, user_for_token
from hub.core.people.sessions import open_session, signed_in
from hub.core.people.two_factor import confirm, is_on, new_secret
from hub.core.store.models import Event, User
from hub.testing import opened
from tests.test_cli import lineup


async def test_the_operator_lists_resets_disables_and_enables_accounts(
    database_url: str, tmp_path: Path
) -> None:
    async with opened(database_url):
        admin, _ = await create_user("admin@example.com", "admin password")
        bea, _ = await create_user("bea@example.com", "bea password")
        _, bea_token = await create_api_token(bea, "script")
        bea_session = await open_session(bea, user_agent=None)

    listed = lineup(database_url, tmp_path, "user", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["email"], r["isAdmin"], r["disabledAt"]) for r in rows] == [
        ("admin@example.com", True, None),
        ("bea@example.com", False, None),
    ]

    reset = lineup(
        database_url, tmp_path, "user", "set-password", "bea@example.com", stdin="temporary 1\n"
    )
    assert reset.returncode == 0, reset.stderr
    async with opened(database_url):
        assert (await authenticate("bea@example.com", "temporary 1")).id == bea.id
        assert await signed_in(bea_session) is None  # whoever held the old password is out
        bea_session = await open_session(bea, user_agent=None)

    disabled = lineup(database_url, tmp_path, "user", "disable", "bea@example.com")
    assert disabled.returncode == 0, disabled.stderr
    assert json.loads(disabled.stdout)["disabledAt"] is not None
    async with opened(database_url):
        with pytest.raises(Forbidden) as refused:
            await authenticate("bea@example.com", "temporary 1")
        assert refused.value.code == "account_disabled"
        assert await signed_in(bea_session) is None
        with pytest.raises(Unauthorized):
            await user_for_token(bea_token)

    only_admin = lineup(database_url, tmp_path, "user", "disable", "admin@example.com")
    assert only_admin.returncode == 2
    assert "last_admin" in only_admin.stderr and "next:" in only_admin.stderr

    enabled = lineup(database_url, tmp_path, "user", "enable", "bea@example.com")
    assert enabled.returncode == 0, enabled.stderr
    async with opened(database_url):
        assert (await user_for_token(bea_token)).id == bea.id  # the scripts work again
        assert (await User.get(id=admin.id)).disabled_at is None

    weak = lineup(database_url, tmp_path, "user", "set-password", "bea@example.com", stdin="x\n")
    assert weak.returncode == 2 and "weak_password" in weak.stderr


async def test_the_operator_turns_off_two_factor_for_someone_locked_out(
    database_url: str, tmp_path: Path
) -> None:
    key = "test-secret-key-" + "x" * 32  # the CLI's, from the tests' environment
    async with opened(database_url):
        await create_user("admin@example.com", "admin password")
        bea, workspace = await create_user("bea@example.com", "bea password")
        secret = new_secret()
        await confirm(
            bea, secret, pyotp.TOTP(secret).now(), secret_key=key, address=None, via="web"
        )
        bea_session = await open_session(bea, user_agent=None)

    listed = lineup(database_url, tmp_path, "user", "list")
    assert [json.loads(line)["twoFactor"] for line in listed.stdout.splitlines()] == [False, True]
    off = lineup(database_url, tmp_path, "user", "two-factor-off", "bea@example.com")
    assert off.returncode == 0, off.stderr
    async with opened(database_url):
        bea = await User.get(id=bea.id)
        assert not is_on(bea)
        assert (await authenticate("bea@example.com", "bea password")).id == bea.id
        assert await signed_in(bea_session) is None  # a session someone else held is over
        turns = await Event.filter(
            workspace_id=workspace.id, type__startswith="account.two_factor"
        ).order_by("sequence")
        assert [(e.type, e.actor, e.payload.get("via")) for e in turns] == [
            ("account.two_factor_on", f"user:{bea.id}", "web"),
            ("account.two_factor_off", "operator", "operator"),
        ]

    again = lineup(database_url, tmp_path, "user", "two-factor-off", "bea@example.com")
    assert again.returncode == 2 and "totp_already_off" in again.stderr
    nobody = lineup(database_url, tmp_path, "user", "two-factor-off", "no@example.com")
    assert nobody.returncode != 0 and "Traceback" not in nobody.stderr
