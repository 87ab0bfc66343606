"""The workspace's members and invitations: listed for every member, managed by owners."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from quart import Blueprint, current_app

from hub.config import Settings
from hub.core.approvals.permissions import ensure_owner
from hub.core.people import invitations
from hub.core.people.members import change_role, list_members, parse_role, remove_member
from hub.core.store.models import Invitation, Role
from hub.host.client_address import client_address
from hub.host.identity import current_caller, member_of
from hub.host.settings import settings_of
from hub.protocol.clock import iso
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_members", __name__, url_prefix="/api/v1")

RoleName = Literal["owner", "member", "viewer"]


class NewInvitation(ApiModel):
    role: RoleName = Field(description="What the newcomer may do: viewers read, never answer.")
    email: str | None = Field(
        None,
        max_length=320,
        description="Mail the invitation to this address (only it may accept). Without it, "
        "the answer holds a link for you to pass on.",
    )


class RoleChange(ApiModel):
    role: RoleName


class Acceptance(ApiModel):
    token: str = Field(min_length=1, max_length=200, description="The token of the join link.")


def invitation_view(invitation: Invitation) -> dict[str, Any]:
    return {
        "id": invitation.id,
        "role": Role(invitation.role).value,
        "email": invitation.email,
        "sentBy": "email" if invitation.email else "link",
        "expiresAt": iso(invitation.expires_at),
        "createdAt": iso(invitation.created_at),
    }


def _settings() -> Settings:
    settings: Settings = settings_of(current_app)
    return settings


@blueprint.get("/workspaces/<ws>/members")
async def members(ws: str) -> dict[str, Any]:
    """Who belongs to the workspace, with their role (owners first)."""
    await member_of(ws)
    return {"members": await list_members(ws)}


@blueprint.post("/workspaces/<ws>/members/<user_id>/role")
@json_body(RoleChange)
async def set_role(ws: str, user_id: str, body: RoleChange) -> dict[str, Any]:
    """Owners only. 409 ``last_owner`` if it would leave the workspace without an owner."""
    caller, membership = await member_of(ws)
    ensure_owner(membership)
    await change_role(ws, user_id, parse_role(body.role), by=caller.user, address=client_address())
    return next(m for m in await list_members(ws) if m["userId"] == user_id)


@blueprint.post("/workspaces/<ws>/members/<user_id>/remove")
async def remove(ws: str, user_id: str) -> dict[str, Any]:
    """Owners only. The person loses access at once: links and buttons already sent to them
    stop answering. 409 ``last_owner`` for the last owner."""
    caller, membership = await member_of(ws)
    ensure_owner(membership)
    await remove_member(ws, user_id, by=caller.user, address=client_address())
    return {"removed": user_id}


@blueprint.get("/workspaces/<ws>/invitations")
async def pending(ws: str) -> dict[str, Any]:
    """Owners only: invitations not yet accepted, revoked or expired."""
    _, membership = await member_of(ws)
    ensure_owner(membership)
    return {"invitations": [invitation_view(i) for i in await invitations.pending_invitations(ws)]}


@blueprint.post("/workspaces/<ws>/invitations")
@json_body(NewInvitation)
async def invite(ws: str, body: NewInvitation) -> tuple[dict[str, Any], int]:
    """Owners only. Invite someone with a role; the invitation works once, for 7 days.
    With ``email`` the hub mails it; otherwise ``url`` is the link to pass on (shown once)."""
    caller, membership = await member_of(ws)
    ensure_owner(membership)
    settings = _settings()
    invitation, token = await invitations.invite(
        ws,
        parse_role(body.role),
        by=caller.user,
        secret_key=settings.secret_key,
        email=body.email,
        address=client_address(),
    )
    view = invitation_view(invitation)
    if invitation.email is None:
        view["url"] = invitations.join_url(settings.resolved_public_url, token)
    return view, 201


@blueprint.post("/workspaces/<ws>/invitations/<invitation_id>/revoke")
async def revoke(ws: str, invitation_id: str) -> dict[str, Any]:
    """Owners only: the invitation's link stops working."""
    caller, membership = await member_of(ws)
    ensure_owner(membership)
    await invitations.revoke(ws, invitation_id, by=caller.user, address=client_address())
    return {"revoked": invitation_id}


@blueprint.post("/invitations/accept")
@json_body(Acceptance)
async def accept(body: Acceptance) -> dict[str, Any]:
    """Join the workspace the token invites you to, with its role. 410 ``invitation_invalid``
    when it was used, revoked or expired; 403 ``invitation_for_another`` when it was mailed
    to another address."""
    caller = await current_caller()
    invitation = await invitations.accept(body.token, caller.user, address=client_address())
    return {"workspaceId": invitation.workspace_id, "role": Role(invitation.role).value}
