"""Sign up, log in, log out, and the front door that leads to one's inbox.

With two-factor sign-in on, the right password does not sign in yet: the session remembers,
for a few minutes, whose password was right, and the code page finishes the sign-in. The
signed cookie carries only that person's id and a deadline, never the password.
"""

from __future__ import annotations

import time
from typing import Any

from quart import Blueprint, current_app, redirect, request, session, url_for

from hub.core.errors import HubError
from hub.core.people.accounts import create_user
from hub.core.people.signup import Signup, refusal
from hub.core.people.two_factor import is_on
from hub.core.store.models import User
from hub.host.settings import settings_of
from hub.host.templates import render_template
from hub.web.api.auth import check_password, check_second_factor
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required, login_user, logout_user, safe_next
from hub.web.pages.workspace import home_workspace

blueprint = Blueprint("accounts", __name__)

SESSION_PENDING = "pending_sign_in"
PENDING_FOR_S = 300


@blueprint.get("/")
@login_required
async def home() -> Any:
    user = await current_user()
    assert user is not None
    workspace = await home_workspace(user)
    if workspace is None:
        return await render_template("pages/error.html", error=_no_workspace(), status=404), 404
    return redirect(url_for("pages.inbox.show", workspace_id=workspace.id))


@blueprint.route("/login", methods=["GET", "POST"])
async def login() -> Any:
    next_url = safe_next(request.args.get("next"), url_for("pages.accounts.home"))
    if request.method == "GET":
        if await current_user() is not None:
            return redirect(next_url)
        return await render_template("pages/login.html", next_url=next_url, email="")
    form = await request.form
    email = form.get("email", "")
    try:
        user = await check_password(email, form.get("password", ""), via="web")
    except HubError as error:
        html = await render_template(
            "pages/login.html", next_url=next_url, email=email, error=for_person(error)
        )
        return html, error.status
    target = safe_next(form.get("next"), next_url)
    if is_on(user):
        session[SESSION_PENDING] = {
            "user": user.id,
            "until": time.time() + PENDING_FOR_S,
            "next": target,
        }
        return await render_template("pages/login_code.html")
    await login_user(user)
    return redirect(target)


@blueprint.post("/login/code")
async def login_code() -> Any:
    pending = session.get(SESSION_PENDING)
    user = None
    if isinstance(pending, dict) and float(pending.get("until", 0)) > time.time():
        user = await User.filter(id=str(pending.get("user"))).first()
    if user is None:
        session.pop(SESSION_PENDING, None)
        return redirect(url_for("pages.accounts.login"))
    try:
        await check_second_factor(user, (await request.form).get("code", ""), via="web")
    except HubError as error:
        html = await render_template("pages/login_code.html", error=for_person(error))
        return html, error.status
    target = safe_next(pending.get("next"), url_for("pages.accounts.home"))
    await login_user(user)  # a fresh session: the pending mark goes with the old one
    return redirect(target)


@blueprint.route("/signup", methods=["GET", "POST"])
async def signup() -> Any:
    rule = Signup(settings_of(current_app).signup)
    if request.method == "GET":
        # A form that cannot work would only be filled in for nothing: say why instead.
        refused = await refusal(rule)
        if refused is not None:
            html = await render_template(
                "pages/signup.html", values={}, error=for_person(refused), refused=True
            )
            return html, refused.status
        return await render_template("pages/signup.html", values={})
    form = await request.form
    values = {"email": form.get("email", ""), "display_name": form.get("display_name", "")}
    try:
        user, workspace = await create_user(
            values["email"], form.get("password", ""), values["display_name"] or None, signup=rule
        )
    except HubError as error:
        html = await render_template("pages/signup.html", values=values, error=for_person(error))
        return html, error.status
    await login_user(user)
    return redirect(url_for("pages.agents.connect", workspace_id=workspace.id))


@blueprint.post("/logout")
async def logout() -> Any:
    await logout_user()
    return redirect(url_for("pages.accounts.login"))


def _no_workspace() -> dict[str, str]:
    return {
        "code": "no_workspace",
        "message": _("You are not a member of any workspace."),
        "hint": _("Ask a workspace owner to add you."),
    }
