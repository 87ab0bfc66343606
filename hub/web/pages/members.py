"""Settings → Members: who is in the workspace, and (for owners) inviting, re-roling and
removing people; and the page an invitation link opens.

Every change goes through the same core services as the API (``hub.core.people.invitations``,
``hub.core.people.members``), so the same refusals hold: owners only, never without an owner.
A new link invitation's URL is shown once, on the page that created it.

``/join/<token>`` is public: whoever holds the link sees what it invites to, then signs up
(or signs in) and joins in one step. A mailed invitation only admits its own address.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, redirect, request, url_for

from hub.config import Settings
from hub.core.approvals.permissions import ensure_owner
from hub.core.errors import HubError
from hub.core.people import invitations
from hub.core.people.accounts import create_user, require_membership
from hub.core.people.members import change_role, list_members, parse_role, remove_member
from hub.core.people.signup import Signup, refusal
from hub.core.store.models import Invitation, Role, User, Workspace
from hub.host.client_address import client_address
from hub.host.settings import settings_of
from hub.host.templates import render_template
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required, login_user
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("members", __name__)


def _settings() -> Settings:
    settings: Settings = settings_of(current_app)
    return settings


@blueprint.get("/w/<workspace_id>/settings/members")
@login_required
async def show(workspace_id: str) -> Any:
    return await _render(workspace_id)


@blueprint.post("/w/<workspace_id>/settings/members/invite")
@login_required
async def invite(workspace_id: str) -> Any:
    user = await _owner(workspace_id)
    form = await request.form
    email = form.get("email", "").strip() or None
    try:
        invitation, token = await invitations.invite(
            workspace_id,
            parse_role(form.get("role", "")),
            by=user,
            secret_key=_settings().secret_key,
            email=email,
            address=client_address(),
        )
    except HubError as error:
        return await _render(workspace_id, status=error.status, error=for_person(error))
    if invitation.email:
        await flash(_("Invitation sent to %(email)s.", email=invitation.email))
        return redirect(url_for("pages.members.show", workspace_id=workspace_id))
    url = invitations.join_url(_settings().resolved_public_url, token)
    return await _render(workspace_id, status=201, new_link={"url": url, "role": invitation.role})


@blueprint.post("/w/<workspace_id>/settings/members/<user_id>/role")
@login_required
async def role(workspace_id: str, user_id: str) -> Any:
    owner = await _owner(workspace_id)
    try:
        await change_role(
            workspace_id,
            user_id,
            parse_role((await request.form).get("role", "")),
            by=owner,
            address=client_address(),
        )
    except HubError as error:
        return await _render(workspace_id, status=error.status, error=for_person(error))
    await flash(_("Role changed."))
    return redirect(url_for("pages.members.show", workspace_id=workspace_id))


@blueprint.post("/w/<workspace_id>/settings/members/<user_id>/remove")
@login_required
async def remove(workspace_id: str, user_id: str) -> Any:
    owner = await _owner(workspace_id)
    try:
        await remove_member(workspace_id, user_id, by=owner, address=client_address())
    except HubError as error:
        return await _render(workspace_id, status=error.status, error=for_person(error))
    if user_id == owner.id:  # an owner who left has nothing more to see here
        return redirect(url_for("pages.accounts.home"))
    await flash(_("Member removed."))
    return redirect(url_for("pages.members.show", workspace_id=workspace_id))


@blueprint.post("/w/<workspace_id>/settings/invitations/<invitation_id>/revoke")
@login_required
async def revoke(workspace_id: str, invitation_id: str) -> Any:
    owner = await _owner(workspace_id)
    try:
        await invitations.revoke(workspace_id, invitation_id, by=owner, address=client_address())
    except HubError as error:
        return await _render(workspace_id, status=error.status, error=for_person(error))
    await flash(_("Invitation revoked."))
    return redirect(url_for("pages.members.show", workspace_id=workspace_id))


@blueprint.route("/join/<token>", methods=["GET", "POST"])
async def join(token: str) -> Any:
    try:
        invitation = await invitations.open_invitation(token)
    except HubError as error:
        return await _join_page(None, status=error.status, error=for_person(error))
    user = await current_user()
    if request.method == "GET":
        # On a hub closed to new accounts only signing in can join: no form that cannot work.
        refused = None if user else await refusal(Signup(_settings().signup), invited=True)
        return await _join_page(
            invitation,
            values={"email": invitation.email or ""},
            error=for_person(refused) if refused else None,
            no_new_accounts=refused is not None,
        )
    form = await request.form
    values = {"email": form.get("email", ""), "display_name": form.get("display_name", "")}
    try:
        if user is None:
            invitations.ensure_addressed_to(invitation, values["email"])
            user, _personal = await create_user(
                values["email"],
                form.get("password", ""),
                values["display_name"] or None,
                signup=Signup(_settings().signup),
                invited=True,
            )
            await login_user(user)
        await invitations.accept(token, user, address=client_address())
    except HubError as error:
        return await _join_page(
            invitation, status=error.status, error=for_person(error), values=values
        )
    await flash(_("Welcome to %(workspace)s.", workspace=await _workspace_name(invitation)))
    return redirect(url_for("pages.inbox.show", workspace_id=invitation.workspace_id))


async def _owner(workspace_id: str) -> User:
    """The signed-in owner; anyone else is refused (403 ``owners_only``) before any change."""
    user = await current_user()
    assert user is not None
    ensure_owner(await require_membership(user, workspace_id))
    return user


async def _workspace_name(invitation: Invitation) -> str:
    workspace = await Workspace.get(id=invitation.workspace_id)
    return str(workspace.name)


async def _join_page(
    invitation: Invitation | None,
    *,
    status: int = 200,
    error: dict[str, Any] | None = None,
    values: dict[str, str] | None = None,
    no_new_accounts: bool = False,
) -> Any:
    inviter = (
        await User.filter(id=invitation.invited_by_id).first() if invitation is not None else None
    )
    html = await render_template(
        "pages/join.html",
        invitation=invitation,
        workspace_name=await _workspace_name(invitation) if invitation is not None else None,
        inviter=inviter,
        error=error,
        values=values or {},
        join_path=request.path,
        no_new_accounts=no_new_accounts,
    )
    return html, status


async def _render(
    workspace_id: str,
    *,
    status: int = 200,
    error: dict[str, Any] | None = None,
    new_link: dict[str, Any] | None = None,
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    is_owner = frame.role == Role.OWNER
    html = await render_template(
        "pages/members.html",
        **frame.context(),
        members=await list_members(workspace_id),
        pending=await invitations.pending_invitations(workspace_id) if is_owner else [],
        is_owner=is_owner,
        roles=[r.value for r in Role],
        new_link=new_link,
        error=error,
        no_refresh=True,
    )
    return html, status
