"""Settings → Accounts on this hub: the admin's page for every account of the hub.

Only the hub's admin sees it (others get 403 ``admins_only``); it lists the accounts and
disables, enables, gives one a temporary password or turns off their two-factor sign-in
(they lost both phone and recovery codes), through the same core operations as
``lineup user`` (``hub.core.people.operator``), so the same refusals hold: the hub keeps an
enabled admin. It sits under a workspace only for the page's frame; it is about the hub.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, flash, redirect, request, url_for

from hub.core.errors import HubError, NotFound
from hub.core.ids import could_be_an_id
from hub.core.people.operator import (
    ensure_admin,
    list_users,
    set_disabled,
    set_password,
    turn_off_two_factor,
)
from hub.core.people.two_factor import is_on
from hub.core.store.models import User
from hub.host.templates import render_template
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("hub_accounts", __name__)


@blueprint.get("/w/<workspace_id>/settings/accounts")
@login_required
async def show(workspace_id: str) -> Any:
    return await _render(workspace_id)


@blueprint.post("/w/<workspace_id>/settings/accounts/<user_id>/disable")
@login_required
async def disable(workspace_id: str, user_id: str) -> Any:
    return await _change(workspace_id, user_id, "disable")


@blueprint.post("/w/<workspace_id>/settings/accounts/<user_id>/enable")
@login_required
async def enable(workspace_id: str, user_id: str) -> Any:
    return await _change(workspace_id, user_id, "enable")


@blueprint.post("/w/<workspace_id>/settings/accounts/<user_id>/password")
@login_required
async def password(workspace_id: str, user_id: str) -> Any:
    return await _change(workspace_id, user_id, "password")


@blueprint.post("/w/<workspace_id>/settings/accounts/<user_id>/two-factor-off")
@login_required
async def two_factor_off(workspace_id: str, user_id: str) -> Any:
    return await _change(workspace_id, user_id, "two-factor-off")


async def _change(workspace_id: str, user_id: str, what: str) -> Any:
    await _admin(workspace_id)
    try:
        person = await _account(user_id)
        if what == "two-factor-off":
            await turn_off_two_factor(person)
            await flash(
                _(
                    "Two-factor sign-in is off for %(email)s; they sign in with their "
                    "password and can turn it on again.",
                    email=person.email,
                )
            )
        elif what == "password":
            await set_password(person, (await request.form).get("password", ""))
            await flash(
                _("New password set for %(email)s; pass it on to them.", email=person.email)
            )
        else:
            await set_disabled(person, what == "disable")
            await flash(
                _("%(email)s is disabled.", email=person.email)
                if what == "disable"
                else _("%(email)s is enabled.", email=person.email)
            )
    except HubError as error:
        return await _render(workspace_id, status=error.status, error=for_person(error))
    return redirect(url_for("pages.hub_accounts.show", workspace_id=workspace_id))


async def _admin(workspace_id: str) -> User:
    """The signed-in admin, a member of the workspace in the path; anyone else is refused."""
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)  # 404 outside one's workspaces, before 403
    ensure_admin(user)
    return user


async def _account(user_id: str) -> User:
    person = await User.filter(id=user_id).first() if could_be_an_id(user_id) else None
    if person is None:
        raise NotFound(f"No account {user_id}.", code="user_not_found")
    return person


async def _render(
    workspace_id: str, *, status: int = 200, error: dict[str, Any] | None = None
) -> Any:
    user = await _admin(workspace_id)
    frame = await frame_for(user, workspace_id)
    html = await render_template(
        "pages/hub_accounts.html",
        **frame.context(),
        accounts=await list_users(),
        two_factor_on=is_on,
        error=error,
    )
    return html, status
