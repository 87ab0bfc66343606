"""Sign up, log in, log out, and the front door that leads to one's inbox."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, redirect, render_template, request, url_for

from hub.core.errors import HubError
from hub.core.people.accounts import create_user
from hub.core.people.signup import Signup, refusal
from hub.host.settings import settings_of
from hub.web.api.auth import check_password
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required, login_user, logout_user, safe_next
from hub.web.pages.workspace import home_workspace

blueprint = Blueprint("accounts", __name__)


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
    await login_user(user)
    return redirect(safe_next(form.get("next"), next_url))


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
