"""Cards as Block Kit: what fits a message is shown whole, within Slack's limits, and what
does not is a link to the web card — never a part of it to decide on."""

from __future__ import annotations

from typing import Any

import pytest

from hub.channels.cards import Card, CardOption
from hub.channels.slack.blocks import card_blocks, fallback_text
from hub.channels.slack.channel import SlackChannel
from hub.protocol.interactions import InteractionType, Risk
from tests.channels.slack_wire import block_kit_problem

WEB = "http://hub.test/a/signed"


def card(**changes: Any) -> Card:
    values: dict[str, Any] = {
        "id": "int_1",
        "workspace_id": "ws_1",
        "type": InteractionType.APPROVAL,
        "title": "Run the migration?",
        "why": "",
        "impact": "",
        "risk": None,
        "options": (
            CardOption("approve", "Approve", style="primary"),
            CardOption("reject", "Reject"),
        ),
        "multiple": False,
        "min_selections": 1,
        "max_selections": 1,
        "input": None,
        "content": None,
        "content_url": None,
        "details": {},
        "status": "pending",
    }
    return Card(**{**values, **changes})


def blocks_of(shown: Card) -> tuple[list[dict[str, Any]], bool]:
    blocks, native = card_blocks(shown, "abcdefgh", {}, SlackChannel.capabilities, web_link=WEB)
    assert block_kit_problem(blocks, {"text": fallback_text(shown)}, modal=False) is None
    return blocks, native


def buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


@pytest.mark.same_on_every_database
@pytest.mark.parametrize(
    "changes",
    [
        {"options": (CardOption("a", "A" * 76), CardOption("b", "B"))},  # over a button's 75
        {"type": InteractionType.CHOICE, "multiple": True,
         "options": tuple(CardOption(f"o{i}", f"Option {i}") for i in range(11))},  # 11 ticks
        {"type": InteractionType.REVIEW, "content": "x" * 2901},  # over 2,900 characters
        {"details": {f"fact {i}": "v" * 100 for i in range(40)}},  # over 3,000 together
    ],
)  # fmt: skip
def test_what_does_not_fit_links_to_the_web_card(changes: dict[str, Any]) -> None:
    blocks, native = blocks_of(card(**changes))
    assert not native
    [link] = buttons(blocks)
    assert (link["text"]["text"], link["url"]) == ("Open the card on the web", WEB)
    text = "\n".join(b.get("text", {}).get("text", "") for b in blocks)
    assert "too long to show here" in text


@pytest.mark.same_on_every_database
def test_what_fits_is_shown_whole_with_its_controls() -> None:
    ten = tuple(CardOption(f"o{i}", f"Option {i}") for i in range(10))
    blocks, native = blocks_of(card(type=InteractionType.CHOICE, multiple=True, options=ten))
    assert native
    [checkboxes, submit] = buttons(blocks)
    assert len(checkboxes["options"]) == 10 and submit["text"]["text"] == "Submit"

    long_title = "T" * 200  # over a header's 150: a section shows it whole instead
    why = "because\n" * 1000  # 8,000 characters, over three sections
    shown = card(title=long_title, risk=Risk.HIGH, content="c" * 2900, why=why)
    blocks, native = blocks_of(shown)
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert "\n".join(t for t in texts if t.startswith("because")) == why
    assert native and blocks[0] == {
        "type": "section",
        "text": {"type": "plain_text", "text": long_title, "emoji": False},
    }
    assert [b["text"]["text"] for b in buttons(blocks)] == ["Approve", "Reject"]


@pytest.mark.same_on_every_database
def test_a_decided_card_has_no_controls_and_says_the_outcome() -> None:
    decided = card(status="expired")
    blocks, native = blocks_of(decided)
    assert native and buttons(blocks) == []
    assert "This card expired; nothing was decided." in blocks[-1]["text"]["text"]
