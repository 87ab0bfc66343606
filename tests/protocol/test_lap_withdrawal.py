"""The ``interaction.withdrawn`` uplink's payload, as the wire carries it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hub.protocol.lap import UPLINK_PAYLOADS, WITHDRAWAL_REASONS, InteractionWithdrawn


def test_the_uplink_is_known_and_speaks_camel_case() -> None:
    assert UPLINK_PAYLOADS["interaction.withdrawn"] is InteractionWithdrawn
    withdrawal = InteractionWithdrawn.model_validate(
        {"interactionId": "int_01", "reason": "answered_in_terminal", "note": "Allowed once"}
    )
    assert withdrawal.interaction_id == "int_01"
    assert withdrawal.wire() == {
        "interactionId": "int_01",
        "reason": "answered_in_terminal",
        "note": "Allowed once",
    }


def test_the_reason_defaults_to_no_longer_needed_and_the_note_to_nothing() -> None:
    withdrawal = InteractionWithdrawn.model_validate({"interactionId": "int_01"})
    assert (withdrawal.reason, withdrawal.note) == ("no_longer_needed", "")
    assert set(WITHDRAWAL_REASONS) == {"answered_in_terminal", "no_longer_needed"}


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"interactionId": ""},
        {"interactionId": "has spaces"},
        {"interactionId": "int_01", "reason": "bored"},
        {"interactionId": "int_01", "note": "x" * 501},
        {"interactionId": "int_01", "note": None},
    ],
)
def test_what_does_not_fit_is_refused(payload: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        InteractionWithdrawn.model_validate(payload)


def test_a_note_of_five_hundred_characters_fits() -> None:
    assert len(InteractionWithdrawn(interaction_id="int_01", note="x" * 500).note) == 500
