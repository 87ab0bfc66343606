"""Settings → Coding agents: owners write the calls no coding agent may make; a bad rule
comes back on the page with its code, and nothing is saved; other members only read them."""

from __future__ import annotations

import html as markup

from hub.core.approvals.coding_agent_rules import deny_rules
from hub.core.ids import new_id
from hub.core.store.models import Membership, Role

RULES = "Bash(git push --force:*)\n\nEdit(//etc/**)\nBash(git push --force:*)\n"


async def test_an_owner_writes_the_rules_one_per_line(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    settings = ada.w("/settings")
    saved = await ada.post(
        ada.w("/settings/coding-agent-rules"), {"deny": RULES}, token_from=settings
    )
    assert saved.status_code == 302 and saved.headers["Location"].endswith("#coding-agents-title")
    assert await deny_rules(ada.workspace_id) == ["Bash(git push --force:*)", "Edit(//etc/**)"]
    _status, page = await ada.page(settings)
    assert ">Bash(git push --force:*)\nEdit(//etc/**)</textarea>" in page


async def test_a_bad_rule_is_named_and_what_was_typed_stays(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    typed = "Bash(git push --force:*)\nEdit(~/.ssh/**)"
    refused = await ada.post(
        ada.w("/settings/coding-agent-rules"), {"deny": typed}, token_from=ada.w("/settings")
    )
    page = markup.unescape(await refused.get_data(as_text=True))
    assert refused.status_code == 422
    assert "Rule 2" in page and "invalid_rule" in page
    assert f">{typed}</textarea>" in page
    assert await deny_rules(ada.workspace_id) == []


async def test_a_member_reads_the_rules_and_cannot_change_them(browser) -> None:  # type: ignore[no-untyped-def]
    ada, bea = await browser("Ada"), await browser("Bea")
    await ada.post(
        ada.w("/settings/coding-agent-rules"), {"deny": "WebFetch"}, token_from=ada.w("/settings")
    )
    await Membership.create(
        id=new_id("membership"),
        workspace_id=ada.workspace_id,
        user_id=bea.user_id,
        role=Role.MEMBER,
    )
    settings = f"/w/{ada.workspace_id}/settings"
    _status, page = await bea.page(settings)
    assert "readonly>WebFetch</textarea>" in page and "Save rules" not in page
    refused = await bea.post(f"{settings}/coding-agent-rules", {"deny": ""}, token_from=settings)
    assert refused.status_code == 403 and "owners_only" in await refused.get_data(as_text=True)
    assert await deny_rules(ada.workspace_id) == ["WebFetch"]
