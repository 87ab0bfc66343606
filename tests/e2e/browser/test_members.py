"""Settings → Members in a real browser: an owner invites by link, the invitee signs up on
the link's page and lands in the workspace as a viewer, sees cards without buttons (and none in
an inbox of her own), and the owner makes them a member."""

from __future__ import annotations

from hub.core.people.members import list_members
from tests.e2e.browser.conftest import PASSWORD, Person, new_context
from tests.web.pages.world import build_world


async def test_an_owner_invites_a_viewer_and_makes_them_a_member(sign_up, chromium, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    page = ada.page
    await page.goto(ada.url("/settings"))
    await page.get_by_role("link", name="Members of this workspace").click()
    await page.get_by_label("Role", exact=True).select_option("viewer")
    await page.get_by_role("button", name="Invite", exact=True).click()
    link = (await page.locator("#new-invitation").inner_text()).strip()
    assert "/join/lu_inv_" in link

    bea_context = await new_context(chromium)
    bea = await bea_context.new_page()
    await bea.goto(link)
    assert "as a viewer" in await bea.locator("[data-invitation-summary]").inner_text()
    await bea.get_by_label("Your name").fill("Bea")
    await bea.get_by_label("Email").fill("bea@example.com")
    await bea.get_by_label("Password").fill(PASSWORD)
    await bea.get_by_role("button", name="Sign up and join").click()
    await bea.wait_for_url(f"**/w/{ada.workspace_id}/inbox")
    # A viewer's inbox holds no card (none is theirs to answer); the card's own page shows
    # it, without buttons.
    card = bea.locator(f'[data-card="{world.cards["choice"]}"]')
    assert await card.count() == 0
    await bea.goto(ada.url(f"/interactions/{world.cards['choice']}"))
    await card.locator("[data-viewer-note]").wait_for()
    assert await card.get_by_role("button").count() == 0

    await page.reload()
    row = page.locator("[data-member]", has_text="bea@example.com")
    assert await row.get_attribute("data-role") == "viewer"
    await row.get_by_label("Role of Bea").select_option("member")
    await row.get_by_role("button", name="Change role").click()
    await page.locator(".notice", has_text="Role changed.").wait_for()
    roles = {m["email"]: m["role"] for m in await list_members(ada.workspace_id)}
    assert roles["bea@example.com"] == "member"

    await bea.reload()
    await card.get_by_role("button", name="Europe").wait_for()
    await bea.goto(ada.url("/inbox"))  # now a member's, it waits for her too
    await card.get_by_role("button", name="Europe").wait_for()
    await bea_context.close()
    await ada.context.close()
