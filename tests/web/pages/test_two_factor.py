"""Settings → Two-factor sign-in and the code page after the password, with codes computed
by pyotp as the person's authenticator app would."""

from __future__ import annotations

import re
import time

import pyotp
from quart import Quart

from hub.core.people.sealing import unseal
from hub.core.people.two_factor import CODE_FAILURES
from hub.core.store.models import User
from hub.host.settings import settings_of
from tests.web.pages.conftest import PASSWORD, Browser


async def test_set_up_sign_in_with_a_code_and_turn_off(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    CODE_FAILURES.reset()
    ada = await browser("Ada")
    email = (await User.get(id=ada.user_id)).email
    settings = ada.w("/settings")
    _status, html = await ada.page(settings)
    assert 'data-two-factor="off"' in html

    response = await ada.post(ada.w("/settings/two-factor/setup"), {}, token_from=settings)
    assert response.status_code == 302
    _status, html = await ada.page(settings)
    assert "<svg" in html and 'class="qr-code"' in html
    shown = re.search(r'<code id="totp-secret">([A-Z2-7 ]+)</code>', html)
    assert shown is not None
    authenticator = pyotp.TOTP(shown.group(1).replace(" ", ""))

    wrong = await ada.post(
        ada.w("/settings/two-factor/confirm"), {"code": "000000"}, token_from=settings
    )
    assert wrong.status_code == 401 and "bad_totp_code" in await wrong.get_data(as_text=True)
    assert (await User.get(id=ada.user_id)).totp_secret_sealed is None
    confirmed = await ada.post(
        ada.w("/settings/two-factor/confirm"), {"code": authenticator.now()}, token_from=settings
    )
    page = await confirmed.get_data(as_text=True)
    assert confirmed.status_code == 201
    codes = re.findall(r"<li><code>([a-z0-9]{5}-[a-z0-9]{5})</code></li>", page)
    assert len(codes) == 10
    _status, html = await ada.page(settings)
    assert 'data-two-factor="on"' in html and codes[0] not in html  # shown once
    # The database holds the secret sealed with the hub's key, never as the app was shown it.
    stored = (await User.get(id=ada.user_id)).totp_secret_sealed
    assert stored is not None and authenticator.secret not in stored
    assert unseal(stored, settings_of(app).secret_key) == authenticator.secret

    phone = Browser(app.test_client())
    asked = await phone.post("/login", {"email": email, "password": PASSWORD})
    assert asked.status_code == 200 and 'name="code"' in await asked.get_data(as_text=True)
    assert (await phone.page(settings))[0] == 302  # not signed in yet
    bad = await phone.post("/login/code", {"code": "123456x"})
    assert bad.status_code == 401
    signed_in = await phone.post("/login/code", {"code": authenticator.at(time.time() + 30)})
    assert signed_in.status_code == 302
    assert (await phone.page(settings))[0] == 200

    # Without a pending password, the code page leads back to the login page.
    stranger = Browser(app.test_client())
    assert (await stranger.post("/login/code", {"code": codes[0]})).status_code == 302
    assert (await stranger.page(settings))[0] == 302

    # Turning it off needs a proof: nothing, or a wrong password, changes nothing.
    for proof, refusal in (({}, "totp_off_needs_proof"), ({"password": "nope"}, "wrong_password")):
        kept = await ada.post(ada.w("/settings/two-factor/off"), proof, token_from=settings)
        assert refusal in await kept.get_data(as_text=True)
        assert (await User.get(id=ada.user_id)).totp_secret_sealed is not None
    off = await ada.post(ada.w("/settings/two-factor/off"), {"code": codes[1]}, token_from=settings)
    assert off.status_code == 302
    assert (await User.get(id=ada.user_id)).totp_secret_sealed is None
    again = Browser(app.test_client())
    assert (await again.post("/login", {"email": email, "password": PASSWORD})).status_code == 302
    CODE_FAILURES.reset()


async def test_the_password_turns_it_off_for_someone_without_their_phone(
    app: Quart,
    browser,  # type: ignore[no-untyped-def]
) -> None:
    ada = await browser("Ada")
    settings = ada.w("/settings")
    await ada.post(ada.w("/settings/two-factor/setup"), {}, token_from=settings)
    _status, html = await ada.page(settings)
    shown = re.search(r'<code id="totp-secret">([A-Z2-7 ]+)</code>', html)
    assert shown is not None
    code = pyotp.TOTP(shown.group(1).replace(" ", "")).now()
    await ada.post(ada.w("/settings/two-factor/confirm"), {"code": code}, token_from=settings)
    assert (await User.get(id=ada.user_id)).totp_secret_sealed is not None

    off = await ada.post(
        ada.w("/settings/two-factor/off"), {"password": PASSWORD}, token_from=settings
    )
    assert off.status_code == 302
    assert (await User.get(id=ada.user_id)).totp_secret_sealed is None
