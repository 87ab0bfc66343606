"""A person's account in a real browser: changing the password in Settings, turning on
two-factor sign-in with a code computed by pyotp from the key the page shows, signing in
with a code and with a recovery code (good once), and a reset link mailed through a real
SMTP server on loopback setting a new password."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pyotp
import pytest
from playwright.async_api import Page

from hub.testing import HubProcess, eventually
from tests.channels.peers import SmtpPeer
from tests.e2e.browser.conftest import PASSWORD, Person

pytestmark = pytest.mark.same_on_every_database

CHANGED = "a changed passphrase"
RESET = "a passphrase from the mail"


@pytest.fixture
def hub(database_url: str, tmp_path: Path, smtp: SmtpPeer) -> Iterator[HubProcess]:
    with HubProcess(database_url, tmp_path / "hub", LINEUP_SMTP_URL=smtp.url) as process:
        try:
            yield process
        finally:
            print(process.log()[-4000:])  # shown by pytest only when the test fails


async def _log_in(page: Page, person: Person, password: str, code: str) -> None:
    await page.goto(f"{person.hub.url}/login")
    await page.get_by_label("Email").fill(person.email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in", exact=True).click()
    await page.get_by_label("Code from your authenticator app").fill(code)
    await page.get_by_role("button", name="Sign in", exact=True).click()


async def _log_out(page: Page) -> None:
    await page.get_by_role("button", name="Log out").click()
    await page.wait_for_url("**/login**")


async def test_password_two_factor_recovery_codes_and_a_mailed_reset(
    sign_up, smtp: SmtpPeer
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    inbox = f"**/w/{ada.workspace_id}/inbox"
    await page.goto(ada.url("/settings"))
    await page.get_by_label("Current password").fill(PASSWORD)
    await page.get_by_label("New password", exact=True).fill(CHANGED)
    await page.get_by_label("New password again").fill(CHANGED)
    await page.get_by_role("button", name="Change password").click()
    await page.locator(".notice", has_text="Password changed.").wait_for()

    await page.get_by_role("button", name="Set up two-factor sign-in").click()
    key = (await page.locator("#totp-secret").inner_text()).replace(" ", "")
    authenticator = pyotp.TOTP(key)
    await page.get_by_label("Code from the app").fill(authenticator.now())
    await page.get_by_role("button", name="Turn on", exact=True).click()
    codes = await page.locator("#recovery-codes code").all_inner_texts()
    assert len(codes) == 10
    await _log_out(page)

    # The code that turned it on is spent; the next step's (a clock a little ahead) is not.
    await _log_in(page, ada, CHANGED, authenticator.at(time.time() + 30))
    await page.wait_for_url(inbox)
    await _log_out(page)
    await _log_in(page, ada, CHANGED, codes[0])
    await page.wait_for_url(inbox)
    await _log_out(page)
    await _log_in(page, ada, CHANGED, codes[0])
    await page.get_by_role("alert").filter(has_text="bad_totp_code").wait_for()

    await page.goto(f"{ada.hub.url}/login")
    await page.get_by_role("link", name="Forgot your password?").click()
    await page.get_by_label("Your account's email address").fill(ada.email)
    await page.get_by_role("button", name="Mail me a link").click()
    await page.locator("[data-reset-sent]").wait_for()
    mail = (await eventually(lambda: smtp.to(ada.email)))[0]
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    link = re.search(r"http://127\.0\.0\.1:\d+/password/reset/[\w.\-]+", plain.get_content())
    assert link is not None
    await page.goto(link.group(0))
    await page.get_by_label("New password", exact=True).fill(RESET)
    await page.get_by_label("New password again").fill(RESET)
    await page.get_by_role("button", name="Set the password").click()
    await page.get_by_text("Your password is set").wait_for()
    await _log_in(page, ada, RESET, codes[1])
    await page.wait_for_url(inbox)
    await ada.context.close()
