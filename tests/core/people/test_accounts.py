"""People and their API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hub.core.errors import Conflict, InvalidInput, Unauthorized
from hub.core.people.accounts import authenticate, create_api_token, create_user, user_for_token
from hub.core.store.models import ApiToken


async def test_email_is_normalised_and_unique(db: str) -> None:
    user, workspace = await create_user("  Ann@Example.COM ", "correct horse")
    assert user.email == "ann@example.com" and workspace.name == "ann's workspace"
    with pytest.raises(Conflict) as taken:
        await create_user("ann@example.com", "correct horse")
    assert taken.value.code == "email_taken"


async def test_weak_passwords_and_bad_addresses_are_refused(db: str) -> None:
    with pytest.raises(InvalidInput):
        await create_user("b@example.com", "short")
    with pytest.raises(InvalidInput):
        await create_user("not an address", "correct horse")


async def test_login_checks_the_password(db: str) -> None:
    user, _ = await create_user("c@example.com", "correct horse")
    assert (await authenticate("C@example.com", "correct horse")).id == user.id
    with pytest.raises(Unauthorized):
        await authenticate("c@example.com", "wrong horse")
    with pytest.raises(Unauthorized):
        await authenticate("nobody@example.com", "correct horse")


async def test_token_use_is_stamped_at_most_once_a_minute(make_user) -> None:  # type: ignore[no-untyped-def]
    user, _ = await make_user("stamp")
    token, secret = await create_api_token(user, "t")
    assert (await user_for_token(secret)).id == user.id
    first = (await ApiToken.get(id=token.id)).last_used_at
    assert first is not None
    await user_for_token(secret)
    assert (await ApiToken.get(id=token.id)).last_used_at == first
    await ApiToken.filter(id=token.id).update(last_used_at=first - timedelta(minutes=5))
    await user_for_token(secret)
    assert (await ApiToken.get(id=token.id)).last_used_at > first - timedelta(minutes=5)
