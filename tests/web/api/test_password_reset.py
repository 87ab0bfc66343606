"""Forgot your password? through the JSON API, over real sockets: ``lineup serve`` mails the
link through a real SMTP server on loopback, and its token sets a new password once. Asking
answers 202 alike for every address; bad links and requests are capped per client."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from hub.testing import HubProcess, eventually
from tests.channels.peers import SmtpPeer

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
async def mailing_hub(db: str, tmp_path: Path, smtp: SmtpPeer) -> AsyncIterator[HubProcess]:
    process = HubProcess(db, tmp_path / "hub", LINEUP_SMTP_URL=smtp.url)
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


def _token(mail: EmailMessage) -> str:
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    found = re.search(r"/password/reset/([\w.\-]+)", plain.get_content())
    assert found, plain.get_content()
    return found.group(1)


async def test_a_mailed_token_resets_once_and_unknown_addresses_look_the_same(
    mailing_hub: HubProcess, smtp: SmtpPeer
) -> None:
    async with (
        httpx.AsyncClient(base_url=mailing_hub.url, timeout=15) as ada,
        httpx.AsyncClient(base_url=mailing_hub.url, timeout=15) as client,
    ):
        registered = await ada.post(
            "/api/v1/auth/register", json={"email": "ada@example.com", "password": PASSWORD}
        )
        assert registered.status_code == 201

        unknown = await client.post("/api/v1/auth/password-reset", json={"email": "no@example.com"})
        known = await client.post("/api/v1/auth/password-reset", json={"email": "ADA@example.com"})
        assert known.status_code == unknown.status_code == 202
        assert known.json() == unknown.json() == {"linkValidForS": 1800}
        token = _token((await eventually(lambda: smtp.to("ada@example.com")))[0])
        assert smtp.to("no@example.com") == []

        path = "/api/v1/auth/password-reset/complete"
        weak = await client.post(path, json={"token": token, "newPassword": "short"})
        assert weak.status_code == 422 and weak.json()["error"]["code"] == "weak_password"
        done = await client.post(path, json={"token": token, "newPassword": NEW_PASSWORD})
        assert done.status_code == 200 and done.json() == {"sessionsEnded": 1}
        assert (await ada.get("/api/v1/me")).status_code == 401  # every session ended
        signed_in = await ada.post(
            "/api/v1/auth/login", json={"email": "ada@example.com", "password": NEW_PASSWORD}
        )
        assert signed_in.status_code == 200

        reused = await client.post(path, json={"token": token, "newPassword": "yet another one"})
        assert reused.status_code == 410
        error = reused.json()["error"]
        assert error["code"] == "reset_link_invalid" and "Forgot your password" in error["hint"]

        # A client trying link after link is capped as a login guesser is (one spent above).
        codes = [
            (
                await client.post(path, json={"token": f"{n}.1.x", "newPassword": NEW_PASSWORD})
            ).status_code
            for n in range(10)
        ]
        assert codes == [410] * 9 + [429]
        capped = await client.post(path, json={"token": token, "newPassword": NEW_PASSWORD})
        assert capped.json()["error"]["code"] == "reset_link_rate_limited"

        # Requests are capped per address, alike for an address with no account.
        asked = [
            (
                await client.post("/api/v1/auth/password-reset", json={"email": "eve@x.org"})
            ).status_code
            for _ in range(4)
        ]
        assert asked == [202, 202, 202, 429]
