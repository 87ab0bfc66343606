"""The first account of a fresh hub is its admin, and only one can be the first: sign-ups
racing on an empty hub leave exactly one admin, on either database."""

from __future__ import annotations

import asyncio

from hub.core.people.accounts import create_user
from hub.core.people.signup import Signup
from hub.core.store.models import User

RACERS = 8


async def test_racing_first_sign_ups_make_one_admin(db: str) -> None:
    made = await asyncio.gather(
        *(
            create_user(f"racer{n}@example.com", "correct horse", signup=Signup.OPEN)
            for n in range(RACERS)
        )
    )
    assert len(made) == RACERS
    admins = await User.filter(is_admin=True).values_list("email", flat=True)
    assert len(admins) == 1, admins
    # The admin is the account that was first to be stored, as migration 0017 names one.
    oldest = await User.all().order_by("created_at", "id").first()
    assert oldest is not None and [oldest.email] == admins
