"""How member events change memberships and invitations, in the transaction that logs them.

``member.invited``, ``member.joined``, ``member.role_changed``, ``member.removed`` and
``member.invitation_revoked`` are the workspace's record of who joined, with which role,
and who changed it. Memberships and invitations are entities (they are not rebuilt from
the log), but each change commits with its event: a handler here runs inside
``append_event``'s transaction, after the workspace's sequence row is locked, so two
owners demoting each other at once, or one link used twice at once, end in one change and
one refusal — never in a workspace with no owner or a link that made two members.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hub.core.errors import Conflict, Forbidden, Gone, NotFound
from hub.core.ids import new_id
from hub.core.log.handlers import Connection, EventHandlers
from hub.core.people.sessions import end_sessions
from hub.core.store.models import Event, Invitation, Membership, Role, User
from hub.core.store.notification_models import Notification, NotificationKind, NotificationStatus

handlers = EventHandlers()


def is_open(invitation: Invitation, now: datetime | None = None) -> bool:
    return (
        invitation.accepted_at is None
        and invitation.revoked_at is None
        and invitation.expires_at > (now or datetime.now(UTC))
    )


def with_address(payload: dict[str, Any], address: str | None) -> dict[str, Any]:
    """A member event's payload with the address of the client that asked, when one did."""
    return {**payload, "address": address} if address else payload


def invitation_gone() -> Gone:
    return Gone(
        "This invitation is not valid any more: it was used, revoked or has expired.",
        code="invitation_invalid",
        hint="Ask an owner of the workspace for a new invitation.",
    )


@handlers.on("member.invited")
async def _invited(event: Event, connection: Connection) -> None:
    """A mailed invitation goes out through the outbox, so an SMTP outage delays it only."""
    email = event.payload.get("email")
    if not email:
        return
    invitation_id = str(event.payload["invitationId"])
    await Notification.create(
        using_db=connection,
        id=new_id("notification"),
        workspace_id=event.workspace_id,
        user_id=None,
        surface="email",
        kind=NotificationKind.INVITED,
        invitation_id=invitation_id,
        event_sequence=event.sequence,
        dedupe_key=f"invited:{invitation_id}:email",
        status=NotificationStatus.PENDING,
        attempts=0,
        next_attempt_at=event.recorded_at,
        last_error="",
        created_at=event.recorded_at,
    )


@handlers.on("member.joined")
async def _joined(event: Event, connection: Connection) -> None:
    invitation = (
        await Invitation.filter(id=event.payload.get("invitationId"))
        .using_db(connection)
        .select_for_update()
        .first()
    )
    if invitation is None or not is_open(invitation, event.recorded_at):
        raise invitation_gone()
    user = await User.filter(id=event.payload.get("userId")).using_db(connection).get()
    if invitation.email and invitation.email != user.email:
        raise Forbidden(
            f"This invitation was sent to {invitation.email}; you are signed in as {user.email}.",
            code="invitation_for_another",
            hint=f"Sign in as {invitation.email} to accept it, or ask for a new invitation.",
        )
    if await _membership(event.workspace_id, user.id, connection) is not None:
        raise Conflict(
            "You are a member of this workspace already.",
            code="already_member",
            hint="Open the workspace from the hub; an owner can change your role.",
        )
    await Membership.create(
        using_db=connection,
        id=new_id("membership"),
        workspace_id=event.workspace_id,
        user_id=user.id,
        role=invitation.role,
    )
    await (
        Invitation.filter(id=invitation.id)
        .using_db(connection)
        .update(accepted_at=event.recorded_at, accepted_by_id=user.id)
    )


@handlers.on("member.role_changed")
async def _role_changed(event: Event, connection: Connection) -> None:
    membership = await _member(event, connection)
    role = Role(str(event.payload["role"]))
    if membership.role == Role.OWNER and role != Role.OWNER:
        await _keep_an_owner(event.workspace_id, connection, "demoted")
    await Membership.filter(id=membership.id).using_db(connection).update(role=role)


@handlers.on("member.removed")
async def _removed(event: Event, connection: Connection) -> None:
    membership = await _member(event, connection)
    if membership.role == Role.OWNER:
        await _keep_an_owner(event.workspace_id, connection, "removed")
    await Membership.filter(id=membership.id).using_db(connection).delete()
    # Access to this workspace is checked on every request, so it ends here on its own. A
    # person left with no workspace at all has nothing to be signed in for: their browser
    # sessions end with the membership, in the same transaction.
    if not await Membership.filter(user_id=membership.user_id).using_db(connection).exists():
        await end_sessions(membership.user_id, connection=connection)


@handlers.on("member.invitation_revoked")
async def _invitation_revoked(event: Event, connection: Connection) -> None:
    revoked = await (
        Invitation.filter(
            id=event.payload.get("invitationId"),
            workspace_id=event.workspace_id,
            accepted_at=None,
            revoked_at=None,
        )
        .using_db(connection)
        .update(revoked_at=event.recorded_at)
    )
    if not revoked:
        raise Conflict(
            "This invitation was accepted or revoked already.",
            code="invitation_closed",
            hint="Reload the Members page to see who joined.",
        )


async def _membership(workspace_id: str, user_id: str, connection: Connection) -> Membership | None:
    return await (
        Membership.filter(workspace_id=workspace_id, user_id=user_id)
        .using_db(connection)
        .select_for_update()
        .first()
    )


async def _member(event: Event, connection: Connection) -> Membership:
    user_id = str(event.payload.get("userId"))
    membership = await _membership(event.workspace_id, user_id, connection)
    if membership is None:
        raise NotFound(f"{user_id} is not a member of this workspace.", code="member_not_found")
    return membership


async def _keep_an_owner(workspace_id: str, connection: Connection, what: str) -> None:
    owners = await (
        Membership.filter(workspace_id=workspace_id, role=Role.OWNER).using_db(connection).count()
    )
    if owners <= 1:
        raise Conflict(
            f"The last owner of a workspace cannot be {what}.",
            code="last_owner",
            hint="Make another member an owner first (invite one as an owner if you are "
            "alone here); then this change goes through.",
        )


MEMBER_EVENT_TYPES = handlers.types

__all__ = ["MEMBER_EVENT_TYPES", "handlers", "invitation_gone", "is_open"]
