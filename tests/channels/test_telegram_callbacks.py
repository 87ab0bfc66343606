"""Telegram callback data is on the wire: buttons sent long ago must still mean the same."""

from __future__ import annotations

from hub.channels.telegram.callbacks import (
    BatchAction,
    CardAction,
    batch_data,
    card_data,
    is_batch,
    parse_batch,
    parse_card,
)


def test_the_action_letters_never_change() -> None:
    assert {a.name: a.value for a in CardAction} == {
        "PICK": "o",
        "CONFIRM": "c",
        "CANCEL": "x",
        "TICK": "t",
        "SUBMIT": "s",
    }
    assert {a.name: a.value for a in BatchAction} == {
        "APPROVE_ALL": "a",
        "CONFIRM": "c",
        "REJECT_ALL": "r",
        "CANCEL": "x",
    }


def test_card_and_batch_data_read_back_as_written_and_fit_telegrams_64_bytes() -> None:
    assert card_data("k3J9xQ2a", CardAction.PICK, 2) == "k3J9xQ2a:o:2"
    assert parse_card("k3J9xQ2a:o:2") == ("k3J9xQ2a", "o", 2)
    assert parse_card(card_data("k3J9xQ2a", CardAction.SUBMIT)) == ("k3J9xQ2a", "s", -1)
    data = batch_data("b7Hq2LmZ", BatchAction.APPROVE_ALL)
    assert data == "batch:b7Hq2LmZ:a" and is_batch(data)
    assert parse_batch(data) == ("b7Hq2LmZ", "a")
    assert not is_batch("k3J9xQ2a:o:2")
    longest = card_data("k3J9xQ2a", CardAction.CONFIRM, 99)
    assert len(longest.encode()) <= 64
