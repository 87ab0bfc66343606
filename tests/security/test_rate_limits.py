"""Guessing is capped, and the cap says so: a 429 (or an error frame) with a stable code,
the seconds to wait and a next step — for passwords, pairing codes and API tokens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from quart import Quart

from hub.core.agents.registry import PAIRING_ATTEMPTS
from tests.security.conftest import Person


@pytest.fixture(autouse=True)
def _fresh_pairing_limits() -> Iterator[None]:
    PAIRING_ATTEMPTS.reset()
    yield
    PAIRING_ATTEMPTS.reset()


def assert_clear_refusal(error: dict[str, Any], code: str) -> None:
    assert error["code"] == code, error
    assert error["message"] and error["hint"]
    assert error["details"]["retryAfterS"] >= 1


async def test_bad_api_tokens_are_capped_with_a_clear_429(app: Quart) -> None:
    client = app.test_client()
    statuses = []
    for n in range(40):
        response = await client.get(
            "/api/v1/workspaces", headers={"Authorization": f"Bearer lut_guess{n}"}
        )
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert_clear_refusal((await response.get_json())["error"], "token_rate_limited")
            break
    assert statuses[0] == 401 and statuses[-1] == 429, statuses
    assert set(statuses[:-1]) == {401}
    # Other addresses are not affected by one source's guessing.
    other = await client.get(
        "/api/v1/workspaces",
        headers={"Authorization": "Bearer lut_other"},
        scope_base={"client": ("192.0.2.7", 4000)},
    )
    assert other.status_code == 401


async def test_wrong_passwords_are_capped_with_a_clear_429(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    client = app.test_client()
    for _ in range(30):
        response = await client.post(
            "/api/v1/auth/login", json={"email": me.email, "password": "wrong"}
        )
        if response.status_code == 429:
            break
        assert response.status_code == 401
    assert response.status_code == 429
    assert_clear_refusal((await response.get_json())["error"], "login_rate_limited")


async def test_pairing_code_guesses_are_capped_with_a_clear_error_frame(app: Quart) -> None:
    codes = []
    for n in range(30):
        async with app.test_client().websocket("/lap/v0.1") as socket:
            hello = {"pairingCode": f"ZZZZ-{n:04d}", "name": "guesser"}
            await socket.send(json.dumps({"id": f"h{n}", "type": "agent.hello", "payload": hello}))
            frame = json.loads(await socket.receive())
        assert frame["type"] == "error", frame
        codes.append(frame["payload"]["code"])
        if frame["payload"]["code"] == "pairing_rate_limited":
            assert frame["payload"]["hint"]
            break
    assert codes[0] == "pairing_code_unknown" and codes[-1] == "pairing_rate_limited", codes
