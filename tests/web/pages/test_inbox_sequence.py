"""The inbox page follows the log from before what it shows: a card that comes while the
page reads its inbox is after the page's sequence, so the page's socket brings it."""

from __future__ import annotations

import re

import pytest

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Workspace
from hub.web.pages import inbox as inbox_page
from tests.web.pages.world import build_world


async def test_a_card_asked_while_the_inbox_is_read_comes_after_the_pages_sequence(
    browser, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("choice",))
    read_inbox = inbox_page.read_inbox
    asked = {"id": new_id("interaction"), "type": "approval", "title": "Deploy now?"}

    async def a_card_comes_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        box = await read_inbox(*args, **kwargs)
        await append_event(
            ada.workspace_id,
            "interaction.requested",
            {"interaction": asked},
            actor=f"agent:{world.agent.id}",
        )
        return box

    monkeypatch.setattr(inbox_page, "read_inbox", a_card_comes_meanwhile)
    _status, page = await ada.page(ada.w("/inbox"))
    assert asked["id"] not in page  # read before it came
    shown_up_to = int(re.search(r'data-sequence="(\d+)"', page).group(1))  # type: ignore[union-attr]
    workspace = await Workspace.get(id=ada.workspace_id)
    assert shown_up_to < workspace.last_sequence  # so the page's socket sends it
