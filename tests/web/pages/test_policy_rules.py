"""Settings → Approval policies: owners add and delete rules; a bad rule changes nothing."""

from __future__ import annotations

from hub.core.approvals.expiry_approval import approve_on_expiry
from hub.core.approvals.rules import list_rules


async def test_an_owner_adds_a_rule_and_sees_it_listed(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"))
    assert "No rules" in html

    form = {"risk": "high", "mode": "any", "required": "1", "on_expiry": "deny"}
    response = await ada.post(ada.w("/settings/policy-rules"), form, token_from=ada.w("/settings"))
    assert response.status_code == 302
    [rule] = await list_rules(ada.workspace_id)
    assert rule.risk == "high" and rule.policy["onExpiry"] == "deny"
    _status, html = await ada.page(ada.w("/settings"))
    assert "High risk" in html and "on expiry: deny" in html

    response = await ada.post(
        ada.w(f"/settings/policy-rules/{rule.id}/delete"), {}, token_from=ada.w("/settings")
    )
    assert response.status_code == 302 and await list_rules(ada.workspace_id) == []


async def test_a_rule_naming_a_stranger_is_refused_with_its_code(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    form = {"mode": "quorum", "required": "2", "approvers": "nobody@example.com, x@example.com"}
    response = await ada.post(ada.w("/settings/policy-rules"), form, token_from=ada.w("/settings"))
    html = await response.get_data(as_text=True)
    assert response.status_code == 422 and "unknown_approver" in html
    assert await list_rules(ada.workspace_id) == []


async def test_an_owner_chooses_the_risks_an_expiry_may_approve(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"))
    assert "data-approval-settings" in html and 'value="high" ' in html
    form = {"approve_on_expiry": "medium"}
    response = await ada.post(
        ada.w("/settings/approval-settings"), form, token_from=ada.w("/settings")
    )
    assert response.status_code == 302
    assert await approve_on_expiry(ada.workspace_id) == ["medium"]
    # A rule approving low-risk cards on expiry is now refused, with its code.
    rule = {"risk": "low", "mode": "any", "required": "1", "on_expiry": "approve"}
    response = await ada.post(ada.w("/settings/policy-rules"), rule, token_from=ada.w("/settings"))
    html = await response.get_data(as_text=True)
    assert response.status_code == 422 and "expiry_approval_not_allowed" in html
    assert await list_rules(ada.workspace_id) == []
