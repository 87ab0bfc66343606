"""An invitation to join a workspace, as a surface that mails it sees it.

Built when the outbox delivers the row (``ChannelRuntime.deliver``), from the invitation as
it stands then: an invitation accepted or revoked before the mail went out is not sent.
The link is rebuilt from the hub's secret (``hub.core.people.invitations.invitation_token``): the
outbox row holds only the invitation's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.core.notify.preferences import settings_for
from hub.core.people.invitations import invitation_token, join_url
from hub.core.people.member_changes import is_open
from hub.core.store.models import Invitation, User, Workspace


@dataclass(frozen=True, slots=True)
class InvitationMail:
    invitation_id: str
    email: str
    workspace_name: str
    inviter_name: str
    role: str
    url: str
    expires_at: datetime
    language: str


async def load_invitation_mail(
    invitation_id: str, *, secret_key: str, public_url: str
) -> InvitationMail | None:
    """The mail to send, or None when there is nothing to invite to any more."""
    invitation = await Invitation.filter(id=invitation_id).first()
    if invitation is None or invitation.email is None or not is_open(invitation):
        return None
    workspace = await Workspace.get(id=invitation.workspace_id)
    inviter = await User.filter(id=invitation.invited_by_id).first()
    # Someone with an account already reads the mail in the language they chose.
    invitee = await User.filter(email=invitation.email).first()
    language = (await settings_for(invitee.id)).language if invitee else "en"
    return InvitationMail(
        invitation_id=invitation.id,
        email=invitation.email,
        workspace_name=workspace.name,
        inviter_name=inviter.display_name if inviter else workspace.name,
        role=invitation.role.value,
        url=join_url(public_url, invitation_token(invitation.id, secret_key)),
        expires_at=invitation.expires_at,
        language=language or "en",
    )


__all__ = ["InvitationMail", "load_invitation_mail"]
