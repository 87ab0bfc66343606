"""Invitations to join a workspace: made by an owner, used once by the person invited.

An invitation carries the role the newcomer gets (owner, member or viewer) and lasts
``INVITATION_TTL`` unless accepted or revoked first. It travels as a link the owner copies
and passes on, or as a mail the hub sends through the outbox; a mailed invitation may only
be accepted by an account with that address.

The token in the link is derived from the hub's secret and the invitation's id (an HMAC),
and the table holds only its SHA-256: a copy of the database lets no one in, yet the
outbox can rebuild the link when it sends (or resends) the mail. Accepting logs
``member.joined``, whose handler (``hub.core.people.member_changes``) spends the invitation and
creates the membership in the same transaction, so a link used twice at once makes one
member and one refusal.
"""

from __future__ import annotations

import hashlib
import hmac
from base64 import urlsafe_b64encode
from datetime import timedelta

from hub.core.errors import Forbidden, NotFound
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.people.accounts import normalise_email
from hub.core.people.credentials import hash_token
from hub.core.people.member_changes import invitation_gone, is_open, with_address
from hub.core.store.models import Invitation, Role, User
from hub.protocol.clock import iso, utcnow

INVITATION_TTL = timedelta(days=7)
TOKEN_PREFIX = "lu_inv"
JOIN_PATH = "/join/"


def invitation_token(invitation_id: str, secret_key: str) -> str:
    digest = hmac.new(
        secret_key.encode(), f"invitation:{invitation_id}".encode(), hashlib.sha256
    ).digest()
    return f"{TOKEN_PREFIX}_{urlsafe_b64encode(digest).decode().rstrip('=')}"


def join_url(public_url: str, token: str) -> str:
    return f"{public_url.rstrip('/')}{JOIN_PATH}{token}"


async def invite(
    workspace_id: str,
    role: Role,
    *,
    by: User,
    secret_key: str,
    email: str | None = None,
    address: str | None = None,
) -> tuple[Invitation, str]:
    """Create an invitation; returns it and its token. With ``email``, the hub mails the
    link there (``member.invited``'s handler writes the outbox row). ``address``: the IP
    address of the client that asked, for the audit trail."""
    mailed_to = normalise_email(email) if email else None
    invitation_id = new_id("invitation")
    token = invitation_token(invitation_id, secret_key)
    invitation = await Invitation.create(
        id=invitation_id,
        workspace_id=workspace_id,
        role=role,
        email=mailed_to,
        invited_by=by,
        token_hash=hash_token(token),
        expires_at=utcnow() + INVITATION_TTL,
    )
    payload: dict[str, object] = {
        "invitationId": invitation.id,
        "role": role.value,
        "sentBy": "email" if mailed_to else "link",
        "expiresAt": iso(invitation.expires_at),
    }
    if mailed_to:
        payload["email"] = mailed_to
    await append_event(
        workspace_id, "member.invited", with_address(payload, address), actor=f"user:{by.id}"
    )
    return invitation, token


async def open_invitation(token: str) -> Invitation:
    """The invitation behind ``token``; ``Gone`` when it is unknown, used, revoked or
    expired (all four look the same to whoever holds the link)."""
    invitation = await Invitation.filter(token_hash=hash_token(token.strip())).first()
    if invitation is None or not is_open(invitation):
        raise invitation_gone()
    return invitation


def ensure_addressed_to(invitation: Invitation, email: str) -> None:
    """Refuse (403 ``invitation_for_another``) an account for another address than the one
    a mailed invitation went to, before that account is made."""
    if invitation.email and invitation.email != email.strip().lower():
        raise Forbidden(
            f"This invitation was sent to {invitation.email}.",
            code="invitation_for_another",
            hint="Sign up with that address, or ask for a new invitation.",
        )


async def accept(token: str, user: User, *, address: str | None = None) -> Invitation:
    """Join the invitation's workspace as ``user``, with its role.

    Raises ``Gone`` (``invitation_invalid``), ``Forbidden`` (``invitation_for_another``) when
    a mailed invitation is accepted by another address, ``Conflict`` (``already_member``)."""
    invitation = await open_invitation(token)
    await append_event(
        invitation.workspace_id,
        "member.joined",
        with_address(
            {"invitationId": invitation.id, "userId": user.id, "role": invitation.role.value},
            address,
        ),
        actor=f"user:{user.id}",
    )
    return await Invitation.get(id=invitation.id)


async def pending_invitations(workspace_id: str) -> list[Invitation]:
    rows = await Invitation.filter(
        workspace_id=workspace_id, accepted_at=None, revoked_at=None, expires_at__gt=utcnow()
    ).order_by("-created_at")
    return list(rows)


async def revoke(
    workspace_id: str, invitation_id: str, *, by: User, address: str | None = None
) -> None:
    invitation = await Invitation.filter(id=invitation_id, workspace_id=workspace_id).first()
    if invitation is None:
        raise NotFound(
            f"Invitation {invitation_id} does not exist in this workspace.",
            code="invitation_not_found",
        )
    await append_event(
        workspace_id,
        "member.invitation_revoked",
        with_address({"invitationId": invitation.id}, address),
        actor=f"user:{by.id}",
    )


__all__ = [
    "INVITATION_TTL",
    "JOIN_PATH",
    "accept",
    "invitation_gone",
    "invitation_token",
    "invite",
    "is_open",
    "join_url",
    "open_invitation",
    "pending_invitations",
    "revoke",
]
