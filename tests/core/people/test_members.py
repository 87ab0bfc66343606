"""Teams: invitations used once, roles changed by owners, and always an owner left."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from hub.core.errors import Conflict, Forbidden, Gone, InvalidInput
from hub.core.log.events import last_sequence
from hub.core.people.audit import audit_trail
from hub.core.people.invitations import accept, invite, open_invitation, pending_invitations, revoke
from hub.core.people.members import change_role, list_members, parse_role, remove_member
from hub.core.store.models import Invitation, Role
from hub.core.store.notification_models import Notification, NotificationKind
from hub.protocol.clock import utcnow

SECRET = "test-secret"


async def test_a_link_makes_one_member_with_its_role(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    bea, _ = await make_user("bea")
    cy, _ = await make_user("cy")
    invitation, token = await invite(workspace.id, Role.VIEWER, by=owner, secret_key=SECRET)
    stored = await Invitation.get(id=invitation.id)
    assert token not in stored.token_hash and token.startswith("lu_inv_")
    outcomes = await asyncio.gather(accept(token, bea), accept(token, cy), return_exceptions=True)
    assert sorted(type(o).__name__ for o in outcomes) == ["Gone", "Invitation"]
    roles = {m["email"]: m["role"] for m in await list_members(workspace.id)}
    joined = bea.email if bea.email in roles else cy.email
    assert roles == {owner.email: "owner", joined: "viewer"}
    assert await pending_invitations(workspace.id) == []


async def test_a_refused_invitation_changes_nothing(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    bea, _ = await make_user("bea")
    mailed, token = await invite(
        workspace.id, Role.MEMBER, by=owner, secret_key=SECRET, email="someone@example.com"
    )
    before = await last_sequence(workspace.id)
    with pytest.raises(Forbidden) as other:
        await accept(token, bea)
    assert other.value.code == "invitation_for_another"
    with pytest.raises(Conflict) as already:
        await accept(
            (await invite(workspace.id, Role.MEMBER, by=owner, secret_key=SECRET))[1], owner
        )
    assert already.value.code == "already_member"
    expired, old = await invite(workspace.id, Role.MEMBER, by=owner, secret_key=SECRET)
    await Invitation.filter(id=expired.id).update(expires_at=utcnow() - timedelta(seconds=1))
    for bad in (old, "lu_inv_made-up", token + "x"):
        with pytest.raises(Gone) as gone:
            await accept(bad, bea)
        assert gone.value.code == "invitation_invalid"
    await revoke(workspace.id, mailed.id, by=owner)
    with pytest.raises(Gone):
        await open_invitation(token)
    assert [m["email"] for m in await list_members(workspace.id)] == [owner.email]
    # Only the two later invitations and the revocation were logged; no refusal was.
    assert await last_sequence(workspace.id) == before + 3


async def test_a_mailed_invitation_goes_through_the_outbox(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    invitation, _ = await invite(
        workspace.id, Role.MEMBER, by=owner, secret_key=SECRET, email=" New@Example.com "
    )
    assert invitation.email == "new@example.com"
    [row] = await Notification.filter(kind=NotificationKind.INVITED)
    assert (row.invitation_id, row.user_id, row.surface) == (invitation.id, None, "email")


async def test_the_last_owner_stays(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    bea, _ = await make_user("bea")
    await accept((await invite(workspace.id, Role.MEMBER, by=owner, secret_key=SECRET))[1], bea)
    before = await last_sequence(workspace.id)
    for attempt in (
        change_role(workspace.id, owner.id, Role.MEMBER, by=owner),
        remove_member(workspace.id, owner.id, by=owner),
    ):
        with pytest.raises(Conflict) as refused:
            await attempt
        assert refused.value.code == "last_owner"
    assert await last_sequence(workspace.id) == before
    await change_role(workspace.id, bea.id, Role.OWNER, by=owner)
    await change_role(workspace.id, owner.id, Role.VIEWER, by=bea)
    await remove_member(workspace.id, owner.id, by=bea)
    assert [(m["email"], m["role"]) for m in await list_members(workspace.id)] == [
        (bea.email, "owner")
    ]
    with pytest.raises(InvalidInput):
        parse_role("admin")


async def test_every_membership_change_is_audited(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    bea, _ = await make_user("bea")
    invitation, token = await invite(workspace.id, Role.VIEWER, by=owner, secret_key=SECRET)
    await accept(token, bea)
    await change_role(workspace.id, bea.id, Role.MEMBER, by=owner)
    await remove_member(workspace.id, bea.id, by=owner)
    entries = await audit_trail(workspace.id, 0, 100)
    assert [(e["type"], e["actor"]) for e in entries] == [
        ("member.invited", f"user:{owner.id}"),
        ("member.joined", f"user:{bea.id}"),
        ("member.role_changed", f"user:{owner.id}"),
        ("member.removed", f"user:{owner.id}"),
    ]
    assert entries[0]["invitationId"] == entries[1]["invitationId"] == invitation.id
    assert entries[1]["role"] == "viewer"
    assert (entries[2]["role"], entries[2]["previousRole"]) == ("member", "viewer")
    assert entries[3]["userId"] == bea.id
    assert all(token not in str(e) for e in entries)


async def test_two_owners_removing_each_other_at_once_leave_one(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    bea, _ = await make_user("bea")
    await accept((await invite(workspace.id, Role.OWNER, by=owner, secret_key=SECRET))[1], bea)
    outcomes = await asyncio.gather(
        remove_member(workspace.id, bea.id, by=owner),
        remove_member(workspace.id, owner.id, by=bea),
        return_exceptions=True,
    )
    refused = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(refused) == 1 and refused[0].code == "last_owner"
    assert [m["role"] for m in await list_members(workspace.id)] == ["owner"]
