"""Forgot your password?: asking for a reset link, and the page the link opens.

Asking answers the same sentence whatever the address, and in about the same time: the
mail is sent after the answer (a background task), so a known address does not answer
slower than an unknown one. The link's page sets the new password and signs the person
out everywhere; they then sign in with it.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, request

from hub.core.errors import HubError, InvalidInput
from hub.core.people.password_reset import open_reset, reset_password, reset_request
from hub.host.client_address import client_address
from hub.host.settings import settings_of
from hub.host.templates import render_template
from hub.web.api.password_reset import mail_reset_link
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _

blueprint = Blueprint("password_reset", __name__)


@blueprint.route("/password/forgot", methods=["GET", "POST"])
async def forgot() -> Any:
    if request.method == "GET":
        return await render_template("pages/password_forgot.html", email="", sent=False)
    email = (await request.form).get("email", "").strip()
    try:
        if not email:
            raise InvalidInput("Type your account's email address.", code="invalid_email")
        mail = await reset_request(
            email, secret_key=settings_of(current_app).secret_key, client=client_address()
        )
    except HubError as error:
        html = await render_template(
            "pages/password_forgot.html", email=email, sent=False, error=for_person(error)
        )
        return html, error.status
    if mail is not None:
        current_app.add_background_task(mail_reset_link, mail)
    return await render_template("pages/password_forgot.html", email=email, sent=True)


@blueprint.route("/password/reset/<token>", methods=["GET", "POST"])
async def reset(token: str) -> Any:
    secret_key = settings_of(current_app).secret_key
    try:
        if request.method == "GET":
            await open_reset(token, secret_key=secret_key)
            return await render_template("pages/password_reset.html", token=token)
        form = await request.form
        if form.get("new_password", "") != form.get("repeat_password", ""):
            raise InvalidInput(
                "The new password and its repetition differ.", code="passwords_differ"
            )
        await reset_password(
            token,
            form.get("new_password", ""),
            secret_key=secret_key,
            address=client_address(),
            via="web",
        )
    except HubError as error:
        gone = error.code == "reset_link_invalid"
        html = await render_template(
            "pages/password_reset.html", token=None if gone else token, error=for_person(error)
        )
        return html, error.status
    html = await render_template(
        "pages/login.html",
        next_url="/",
        email="",
        notice=_("Your password is set, and you are signed out everywhere. Sign in with it."),
    )
    return html
