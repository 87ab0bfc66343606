"""The people of a workspace and their roles: listed for everyone, managed by owners.

Each change is an event of the workspace's log (``member.role_changed``,
``member.removed``); ``hub.core.people.member_changes`` applies it to the membership in the same
transaction and refuses one that would leave the workspace without an owner. A role
change takes effect at once everywhere: who may answer is asked on every answer
(``hub.core.approvals.permissions``), not remembered by the links and buttons already sent.
"""

from __future__ import annotations

from typing import Any

from hub.core.errors import InvalidInput, NotFound
from hub.core.log.events import append_event
from hub.core.people.member_changes import with_address
from hub.core.store.models import Membership, Role, User
from hub.protocol.clock import iso


def parse_role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        raise InvalidInput(
            f"{value!r} is not a role.",
            code="invalid_role",
            hint="Use one of: owner, member, viewer.",
        ) from None


async def list_members(workspace_id: str) -> list[dict[str, Any]]:
    """Members, owners first, then by when they joined."""
    memberships = await Membership.filter(workspace_id=workspace_id).order_by("created_at")
    users = {u.id: u for u in await User.filter(id__in=[m.user_id for m in memberships])}
    order = {Role.OWNER: 0, Role.MEMBER: 1, Role.VIEWER: 2}
    rows = [member_view(m, users[m.user_id]) for m in memberships if m.user_id in users]
    return sorted(rows, key=lambda row: order[Role(row["role"])])


def member_view(membership: Membership, user: User) -> dict[str, Any]:
    return {
        "userId": user.id,
        "email": user.email,
        "displayName": user.display_name,
        "role": Role(membership.role).value,
        "joinedAt": iso(membership.created_at),
    }


async def change_role(
    workspace_id: str, user_id: str, role: Role, *, by: User, address: str | None = None
) -> None:
    """``address``: the client's, for the audit trail (None when no client asked)."""
    previous = await _current_role(workspace_id, user_id)
    if previous == role:
        return  # nothing changes, nothing to record
    payload = {"userId": user_id, "role": role.value, "previousRole": previous.value}
    await append_event(
        workspace_id, "member.role_changed", with_address(payload, address), actor=f"user:{by.id}"
    )


async def remove_member(
    workspace_id: str, user_id: str, *, by: User, address: str | None = None
) -> None:
    previous = await _current_role(workspace_id, user_id)
    payload = {"userId": user_id, "previousRole": previous.value}
    await append_event(
        workspace_id, "member.removed", with_address(payload, address), actor=f"user:{by.id}"
    )


async def _current_role(workspace_id: str, user_id: str) -> Role:
    role = (
        await Membership.filter(workspace_id=workspace_id, user_id=user_id)
        .first()
        .values_list("role", flat=True)
    )
    if role is None:
        raise NotFound(f"{user_id} is not a member of this workspace.", code="member_not_found")
    return Role(str(role))


__all__ = ["change_role", "list_members", "member_view", "parse_role", "remove_member"]
