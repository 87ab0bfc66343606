"""Settings → Members: owners invite, re-role and remove; nobody else can; viewers act on
nothing; an invitation link signs in or up and joins."""

from __future__ import annotations

import re

from hub.core.log.events import last_sequence
from hub.core.people.members import list_members
from tests.web.pages.world import SECRET_KEY


async def roles(workspace_id: str) -> dict[str, str]:
    return {m["userId"]: m["role"] for m in await list_members(workspace_id)}


async def test_an_owner_invites_by_link_and_manages_the_member(browser) -> None:  # type: ignore[no-untyped-def]
    ada, bea = await browser("Ada"), await browser("Bea")
    members = ada.w("/settings/members")
    created = await ada.post(f"{members}/invite", {"role": "viewer"}, token_from=members)
    assert created.status_code == 201
    html = await created.get_data(as_text=True)
    link = re.search(r'<code id="new-invitation">http://[^/]+(/join/[^<]+)</code>', html)
    assert link is not None

    # Bea is signed in already: the link's page offers to join as her.
    status, page = await bea.page(link.group(1))
    assert status == 200 and "You are signed in as" in page
    joined = await bea.post(link.group(1), {}, token_from=link.group(1))
    assert joined.status_code == 302
    assert joined.headers["Location"].endswith(f"/w/{ada.workspace_id}/inbox")
    assert (await roles(ada.workspace_id))[bea.user_id] == "viewer"

    # As a viewer Bea sees the members but no controls, and may change nothing.
    bea_members = f"/w/{ada.workspace_id}/settings/members"
    status, page = await bea.page(bea_members)
    assert status == 200 and "Ada" in page and "Invite someone" not in page
    status, page = await bea.page(f"/w/{ada.workspace_id}/agents/connect")
    assert status == 200 and "data-viewer-note" in page  # instead of the pairing form
    status, page = await bea.page(f"/w/{ada.workspace_id}/conversations")
    assert status == 200 and "Start a conversation" not in page
    before = await last_sequence(ada.workspace_id)
    for path, form in (
        (f"{bea_members}/invite", {"role": "owner"}),
        (f"{bea_members}/{bea.user_id}/role", {"role": "owner"}),
        (f"{bea_members}/{ada.user_id}/remove", {}),
        (f"/w/{ada.workspace_id}/agents/connect", {}),
    ):
        refused = await bea.post(path, form, token_from=bea_members)
        assert refused.status_code == 403, path
        assert re.search(r"owners_only|read_only_member", await refused.get_data(as_text=True))
    assert await last_sequence(ada.workspace_id) == before

    # The owner makes Bea a member, cannot demote herself as the last owner, removes Bea.
    changed = await ada.post(
        f"{members}/{bea.user_id}/role", {"role": "member"}, token_from=members
    )
    assert changed.status_code == 302
    last = await ada.post(f"{members}/{ada.user_id}/role", {"role": "viewer"}, token_from=members)
    assert last.status_code == 409 and "last_owner" in await last.get_data(as_text=True)
    removed = await ada.post(f"{members}/{bea.user_id}/remove", {}, token_from=members)
    assert removed.status_code == 302
    assert await roles(ada.workspace_id) == {ada.user_id: "owner"}
    status, _page = await bea.page(bea_members)
    assert status == 404


async def test_a_mailed_invitation_admits_only_its_address(browser, app) -> None:  # type: ignore[no-untyped-def]
    from hub.core.people.invitations import invite
    from hub.core.store.models import Role, User

    ada = await browser("Ada")
    owner = await User.get(id=ada.user_id)
    _invitation, token = await invite(
        ada.workspace_id, Role.MEMBER, by=owner, secret_key=SECRET_KEY, email="cy@example.com"
    )
    stranger = app.test_client()
    path = f"/join/{token}"
    response = await stranger.get(path)
    html = await response.get_data(as_text=True)
    assert response.status_code == 200 and 'value="cy@example.com" readonly' in html
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert csrf is not None
    other = await stranger.post(
        path,
        form={"csrf_token": csrf.group(1), "email": "eve@example.com", "password": "long enough"},
    )
    assert other.status_code == 403 and "invitation_for_another" in await other.get_data(
        as_text=True
    )
    assert await User.filter(email="eve@example.com").count() == 0
    joined = await stranger.post(
        path,
        form={"csrf_token": csrf.group(1), "email": "cy@example.com", "password": "long enough"},
    )
    assert joined.status_code == 302
    cy = await User.get(email="cy@example.com")
    assert (await roles(ada.workspace_id))[cy.id] == "member"
    used = await stranger.get(path)
    assert used.status_code == 410 and "invitation_invalid" in await used.get_data(as_text=True)


async def test_the_only_owner_is_not_offered_leaving_and_is_refused(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    members = ada.w("/settings/members")
    status, page = await ada.page(members)
    mine = page.split(f'data-member="{ada.user_id}"', 1)[1].split("</li>", 1)[0]
    assert "data-last-owner" in mine and "/remove" not in mine and "<select" not in mine

    # Sent anyway (an old tab, a hand-made form): refused with the next step, nothing logged.
    before = await last_sequence(ada.workspace_id)
    for path, form in ((f"{members}/{ada.user_id}/remove", {}),
                       (f"{members}/{ada.user_id}/role", {"role": "member"})):  # fmt: skip
        refused = await ada.post(path, form, token_from=members)
        html = await refused.get_data(as_text=True)
        assert refused.status_code == 409 and "<code>last_owner</code>" in html, path
        assert "Make another member an owner first" in html
    assert await last_sequence(ada.workspace_id) == before
    assert await roles(ada.workspace_id) == {ada.user_id: "owner"}
    status, _page = await ada.page(members)
    assert status == 200  # still hers to manage
