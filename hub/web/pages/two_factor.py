"""Settings → Two-factor sign-in: set up with a QR code and a first code, turn off with a code
or the password.

The secret being set up lives in this browser's session (signed, HttpOnly) until a code
from the authenticator confirms it; only then does the account hold it
(``hub.core.people.two_factor``). The recovery codes are shown on the page that confirmed,
that once.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, redirect, request, session, url_for

from hub.core.errors import HubError
from hub.core.people.two_factor import confirm, new_secret, turn_off
from hub.host.client_address import client_address
from hub.host.settings import settings_of
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.settings import SESSION_TOTP_SETUP, render_settings, two_factor_section
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("two_factor", __name__)


@blueprint.post("/w/<workspace_id>/settings/two-factor/setup")
@login_required
async def setup(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    session[SESSION_TOTP_SETUP] = {"user": user.id, "secret": new_secret()}
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id) + "#two-factor")


@blueprint.post("/w/<workspace_id>/settings/two-factor/confirm")
@login_required
async def confirm_setup(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    pending = session.get(SESSION_TOTP_SETUP)
    if not isinstance(pending, dict) or pending.get("user") != user.id:
        return redirect(url_for("pages.settings.show", workspace_id=workspace_id))
    try:
        codes = await confirm(
            user,
            str(pending["secret"]),
            (await request.form).get("code", ""),
            secret_key=settings_of(current_app).secret_key,
            address=client_address(),
            via="web",
        )
    except HubError as error:
        section = await two_factor_section(user, error=for_person(error))
        return await render_settings(workspace_id, status=error.status, two_factor=section)
    session.pop(SESSION_TOTP_SETUP, None)
    section = await two_factor_section(user, recovery_codes=codes)
    return await render_settings(workspace_id, status=201, two_factor=section)


@blueprint.post("/w/<workspace_id>/settings/two-factor/off")
@login_required
async def off(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    try:
        form = await request.form
        await turn_off(
            user,
            code=form.get("code", "").strip() or None,
            password=form.get("password") or None,
            secret_key=settings_of(current_app).secret_key,
            address=client_address(),
            via="web",
        )
    except HubError as error:
        section = await two_factor_section(user, error=for_person(error))
        return await render_settings(workspace_id, status=error.status, two_factor=section)
    await flash(_("Two-factor sign-in is off."))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id))
