"""What a control says when pressed: the callback value of card and batch messages.

A card's controls carry ``{"c": <card>, "a": <action>, "n": <position>}``, a batch
message's ``{"b": <batch>, "a": <action>}``: the opaque id of the delivered row (8
characters), one letter, and an option's position. Meaningless without that server-side
row, and the letters are on the wire (cards sent long ago still carry them), so they never
change.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple


class CardAction(StrEnum):
    # Pick option n; a high-risk approval first asks CONFIRM. In a form (a review, an
    # editable action) the press carries the form's fields.
    PICK = "o"
    CONFIRM = "c"  # confirm option n
    CANCEL = "x"  # take the pending confirmation back
    SUBMIT = "s"  # send a form: a typed answer, or the options chosen


class BatchAction(StrEnum):
    APPROVE_ALL = "a"
    CONFIRM = "c"  # confirm approving all
    REJECT_ALL = "r"
    CANCEL = "x"


WITH_OPTION = frozenset({CardAction.PICK, CardAction.CONFIRM})


class Press(NamedTuple):
    """One press as the callback said it: which row (a card's or a batch's), which action,
    which option (-1: none), and the fields of its form."""

    card_id: str
    batch_id: str
    action: str
    position: int
    form: dict[str, Any]


def card_value(short_id: str, action: CardAction, index: int | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"c": short_id, "a": str(action)}
    if index is not None:
        value["n"] = index
    return value


def batch_value(batch_id: str, action: BatchAction) -> dict[str, Any]:
    return {"b": batch_id, "a": str(action)}


def parse(value: Any, form: Any) -> Press | None:
    """The press a callback's ``action.value`` and ``action.form_value`` describe; None for
    a value this hub never made."""
    if not isinstance(value, dict):
        return None
    card_id, batch_id, action = value.get("c"), value.get("b"), value.get("a")
    if not isinstance(action, str) or not (isinstance(card_id, str) ^ isinstance(batch_id, str)):
        return None
    position = value.get("n")
    return Press(
        card_id if isinstance(card_id, str) else "",
        batch_id if isinstance(batch_id, str) else "",
        action,
        position if isinstance(position, int) and not isinstance(position, bool) else -1,
        form if isinstance(form, dict) else {},
    )
