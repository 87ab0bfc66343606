"""A card that proposes an exact action: shown field by field, edited, then approved."""

from __future__ import annotations

import re

from hub.core.store.models import InteractionStatus
from hub.core.work.interactions import get_interaction
from hub.protocol.actions import action_hash, short_hash
from tests.web.pages.world import HOSTILE, build_world

_HASH = re.compile(r'name="actionHash" value="(sha256:[0-9a-f]{64})"')


async def _card(browser, text: str = ""):  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, text=text, kinds=("approval_action",))
    return ada, world.cards["approval_action"]


async def test_the_card_shows_every_field_the_fingerprint_and_an_edit_form(browser) -> None:  # type: ignore[no-untyped-def]
    ada, card_id = await _card(browser)
    card = (await get_interaction(ada.workspace_id, card_id)).payload["action"]
    shown = action_hash(card["kind"], card["fields"])
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert "Exact action" in html and "db.migration" in html
    assert f"Fingerprint {short_hash(shown)}" in html and f"data-copy-source>{shown}</code>" in html
    for name in ("database", "statements", "batchSize", "dryRun"):
        assert f"<dt>{name}" in html
    assert _HASH.search(html).group(1) == shown  # type: ignore[union-attr]
    assert 'name="action.statements"' in html and 'name="action.batchSize"' in html
    assert 'name="action.database"' not in html  # not editable: shown, never a control


async def test_an_edited_high_risk_approval_takes_the_second_step_and_records_the_edit(
    browser,
) -> None:  # type: ignore[no-untyped-def]
    ada, card_id = await _card(browser)
    respond = ada.w(f"/interactions/{card_id}/respond")
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    shown = _HASH.search(html).group(1)  # type: ignore[union-attr]
    edit = {
        "optionId": "approve",
        "actionHash": shown,
        "action.statements": "ALTER TABLE users ADD plan text\r\n",
        "action.batchSize": "100",
        "action.dryRun": "false",
    }
    first = await ada.post(respond, edit, token_from=ada.w("/inbox"))
    page = await first.get_data(as_text=True)
    assert first.status_code == 200 and "Confirm: Run it" in page
    assert "You edited the action" in page and "100" in page
    assert (await get_interaction(ada.workspace_id, card_id)).status == InteractionStatus.PENDING

    second = await ada.post(
        respond,
        {
            **edit,
            "confirm": "approve",
            "action.statements": re.search(
                r'<textarea name="action.statements" hidden>\n(.*?)</textarea>', page, re.S
            ).group(1),  # type: ignore[union-attr]
        },
        token_from=ada.w("/inbox"),
    )
    assert second.status_code == 302
    decided = await get_interaction(ada.workspace_id, card_id)
    fields = decided.response["action"]["fields"]  # type: ignore[index]
    assert fields["batchSize"] == 100 and fields["statements"] == [
        "ALTER TABLE users ADD plan text"
    ]
    assert decided.response["editedFrom"] == shown  # type: ignore[index]
    assert decided.response["actionHash"] == action_hash("db.migration", fields)  # type: ignore[index]
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert f"edited from {short_hash(shown)}" in html


async def test_a_stale_hash_or_a_bad_edit_is_refused_and_changes_nothing(browser) -> None:  # type: ignore[no-untyped-def]
    ada, card_id = await _card(browser)
    respond = ada.w(f"/interactions/{card_id}/respond")
    stale = await ada.post(
        respond,
        {"optionId": "reject", "actionHash": action_hash("db.migration", {})},
        token_from=ada.w("/inbox"),
    )
    html = await stale.get_data(as_text=True)
    assert stale.status_code == 409 and "action_changed" in html and "reload the card" in html
    _status, page = await ada.page(ada.w(f"/interactions/{card_id}"))
    bad = await ada.post(
        respond,
        {
            "optionId": "approve",
            "confirm": "approve",
            "actionHash": _HASH.search(page).group(1),  # type: ignore[union-attr]
            "action.batchSize": "a hundred",
        },
        token_from=ada.w("/inbox"),
    )
    html = await bad.get_data(as_text=True)
    assert bad.status_code == 422 and "batchSize" in html and "invalid_action_edit" in html
    assert (await get_interaction(ada.workspace_id, card_id)).status == InteractionStatus.PENDING


async def test_agent_text_in_the_action_stays_inert(browser) -> None:  # type: ignore[no-untyped-def]
    ada, card_id = await _card(browser, HOSTILE)
    _status, html = await ada.page(ada.w(f"/interactions/{card_id}"))
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html
