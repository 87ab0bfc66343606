"""Two-factor secrets at rest: sealed with the hub's key, never in a row in the clear, and
a hub whose key changed says so and still takes a recovery code."""

from __future__ import annotations

import time

import pyotp
import pytest
from tortoise import connections

from hub.core.errors import Conflict
from hub.core.people.two_factor import CODE_FAILURES, check_code, confirm, new_secret

KEY = "two-factor-test-key-" + "t" * 32


async def test_the_secret_is_sealed_and_a_changed_key_leaves_the_recovery_codes(
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    CODE_FAILURES.reset()
    user, _ = await make_user("sealed")
    secret = new_secret()
    authenticator = pyotp.TOTP(secret)
    codes = await confirm(
        user, secret, authenticator.now(), secret_key=KEY, address=None, via="api"
    )

    rows = await connections.get("default").execute_query_dict(
        "SELECT * FROM user_account WHERE id = $1"
        if connections.get("default").capabilities.dialect == "postgres"
        else "SELECT * FROM user_account WHERE id = ?",
        [user.id],
    )
    assert rows and all(secret not in str(value) for value in rows[0].values())

    with pytest.raises(Conflict) as unreadable:
        await check_code(user, authenticator.at(time.time() + 30), secret_key="another " + KEY)
    assert unreadable.value.code == "totp_secret_unreadable"
    await check_code(user, codes[0].replace("-", ""), secret_key="another " + KEY)
    await check_code(user, authenticator.at(time.time() + 30), secret_key=KEY)
    CODE_FAILURES.reset()
