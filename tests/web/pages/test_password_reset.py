"""Forgot your password?, over real sockets: ``lineup serve`` mails the link through a real
SMTP server on loopback; the link sets a new password once, ends every session, and is
refused when used again, expired or forged. Asking never says whether an address exists."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from hub.core.people.password_reset import reset_path, reset_token
from hub.core.store.models import User
from hub.testing import HubProcess, eventually
from tests.channels.peers import SmtpPeer

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new passphrase"
SECRET_KEY = "test-secret-key-" + "x" * 32  # HubProcess's
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def mailing_hub(db: str, tmp_path: Path, smtp: SmtpPeer) -> AsyncIterator[HubProcess]:
    process = HubProcess(db, tmp_path / "hub", LINEUP_SMTP_URL=smtp.url)
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


async def _form(browser: httpx.AsyncClient, path: str, form: dict[str, str]) -> httpx.Response:
    page = await browser.get(path)
    match = _CSRF.search(page.text)
    assert match, page.text
    return await browser.post(path, data={**form, "csrf_token": match.group(1)})


def _link(mail: EmailMessage) -> str:
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    found = re.search(r"http://127\.0\.0\.1:\d+(/password/reset/[\w.\-]+)", plain.get_content())
    assert found, plain.get_content()
    return found.group(1)


async def test_a_mailed_link_resets_once_and_ends_every_session(
    mailing_hub: HubProcess, smtp: SmtpPeer
) -> None:
    async with (
        httpx.AsyncClient(base_url=mailing_hub.url, timeout=15) as ada,
        httpx.AsyncClient(base_url=mailing_hub.url, timeout=15) as stranger,
    ):
        registered = await ada.post(
            "/api/v1/auth/register", json={"email": "ada@example.com", "password": PASSWORD}
        )
        assert registered.status_code == 201
        assert (await ada.get("/api/v1/me")).status_code == 200

        login = await stranger.get("/login")
        assert "/password/forgot" in login.text
        started = time.monotonic()
        unknown = await _form(stranger, "/password/forgot", {"email": "nobody@example.com"})
        unknown_s = time.monotonic() - started
        started = time.monotonic()
        known = await _form(stranger, "/password/forgot", {"email": "ADA@example.com"})
        known_s = time.monotonic() - started
        assert known.status_code == unknown.status_code == 200
        # The same page either way, but for the address typed back into the form.
        assert known.text.replace("ADA@example.com", "") == unknown.text.replace(
            "nobody@example.com", ""
        )
        assert "data-reset-sent" in known.text
        assert known_s < unknown_s + 0.5  # no mail is sent before the answer

        mail = (await eventually(lambda: smtp.to("ada@example.com")))[0]
        assert "Reset your LineUp Hub password" in str(mail["Subject"])
        link = _link(mail)
        assert smtp.to("nobody@example.com") == []

        page = await stranger.get(link)
        assert page.status_code == 200 and 'name="new_password"' in page.text
        weak = await _form(stranger, link, {"new_password": "short", "repeat_password": "short"})
        assert weak.status_code == 422 and "weak_password" in weak.text
        done = await _form(
            stranger, link, {"new_password": NEW_PASSWORD, "repeat_password": NEW_PASSWORD}
        )
        assert done.status_code == 200, done.text

        assert (await ada.get("/api/v1/me")).status_code == 401  # every session ended
        old = await ada.post(
            "/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD}
        )
        assert old.status_code == 401
        new = await ada.post(
            "/api/v1/auth/login", json={"email": "ada@example.com", "password": NEW_PASSWORD}
        )
        assert new.status_code == 200

        again = await stranger.get(link)
        assert again.status_code == 410 and "reset_link_invalid" in again.text
        reused = await _form_posting_to(stranger, link)
        assert reused.status_code == 410

        user = await User.get(email="ada@example.com")
        expired = reset_path(reset_token(user, SECRET_KEY, ttl=timedelta(seconds=-1)))
        assert (await stranger.get(expired)).status_code == 410
        fresh = reset_path(reset_token(user, SECRET_KEY))
        assert (await stranger.get(fresh)).status_code == 200
        forged = reset_path(reset_token(user, "another hub's secret " + "y" * 30))
        assert (await stranger.get(forged)).status_code == 410
        audit = (
            await ada.get(f"/api/v1/workspaces/{registered.json()['workspaceId']}/audit")
        ).json()
        assert "account.password_reset" in [e["type"] for e in audit["entries"]]


async def _form_posting_to(browser: httpx.AsyncClient, link: str) -> httpx.Response:
    """A POST to a dead link, with a CSRF token from another page of the same browser."""
    page = await browser.get("/password/forgot")
    match = _CSRF.search(page.text)
    assert match
    return await browser.post(
        link,
        data={
            "csrf_token": match.group(1),
            "new_password": "yet another one!",
            "repeat_password": "yet another one!",
        },
    )


async def test_requests_are_capped_per_address_alike_for_unknown_ones(
    mailing_hub: HubProcess, smtp: SmtpPeer
) -> None:
    async with httpx.AsyncClient(base_url=mailing_hub.url, timeout=15) as browser:
        codes = []
        for _ in range(4):
            response = await _form(browser, "/password/forgot", {"email": "eve@example.com"})
            codes.append(response.status_code)
        assert codes == [200, 200, 200, 429]
        assert smtp.messages == []
