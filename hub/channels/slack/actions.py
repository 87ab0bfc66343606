"""What a control says when used: the ``action_id`` of a card's or a batch's buttons, and
the ``callback_id`` of the modals they open.

An ``action_id`` is ``lineup:<card>:<action>[:<n>]`` (``lineup-batch:<batch>:<action>`` for
a batch message): the opaque id of the ``DeliveredCard`` row, one letter for the action and
an option's position — meaningless without that server-side row, and unique within a
message as Slack requires. The letters are on the wire: messages sent long ago still carry
them, so they never change.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

CARD_PREFIX = "lineup:"
BATCH_PREFIX = "lineup-batch:"


class CardAction(StrEnum):
    # Pick option n; a high-risk approval first asks CONFIRM, a review's "request changes"
    # first asks for a comment in a modal.
    PICK = "o"
    CONFIRM = "c"  # confirm option n
    CANCEL = "x"  # take the pending confirmation back
    TICK = "t"  # the checkboxes of a multi-select changed
    SUBMIT = "s"  # submit the ticks
    ANSWER = "a"  # open the modal that takes an input card's text
    EDIT = "e"  # open the modal that edits the card's action
    WEB = "w"  # a link to the web card: Slack reports the click, nothing to do


class BatchAction(StrEnum):
    APPROVE_ALL = "a"
    CONFIRM = "c"  # confirm approving all
    REJECT_ALL = "r"
    CANCEL = "x"


class ModalKind(StrEnum):
    """A modal's ``callback_id``: what its submission answers."""

    INPUT = "lineup-input"  # an input card's text
    COMMENT = "lineup-comment"  # the comment a review's "request changes" asks for
    EDIT = "lineup-edit"  # the edited fields of a card's action
    EDIT_CONFIRM = "lineup-edit-confirm"  # the second step of a high-risk edited approval


WITH_OPTION = frozenset({CardAction.PICK, CardAction.CONFIRM})


class CardPress(NamedTuple):
    short_id: str
    action: str  # as pressed: an id from elsewhere may carry no CardAction at all
    position: int  # of the option pressed; -1 when the id names none


class BatchPress(NamedTuple):
    batch_id: str
    action: str


def card_action_id(short_id: str, action: CardAction, index: int | None = None) -> str:
    data = f"{CARD_PREFIX}{short_id}:{action}"
    return data if index is None else f"{data}:{index}"


def batch_action_id(batch_id: str, action: BatchAction) -> str:
    return f"{BATCH_PREFIX}{batch_id}:{action}"


def is_batch(action_id: str) -> bool:
    return action_id.startswith(BATCH_PREFIX)


def is_card(action_id: str) -> bool:
    return action_id.startswith(CARD_PREFIX)


def parse_card(action_id: str) -> CardPress:
    short_id, _colon, rest = action_id.removeprefix(CARD_PREFIX).partition(":")
    action, _colon, argument = rest.partition(":")
    return CardPress(short_id, action, int(argument) if argument.isdigit() else -1)


def parse_batch(action_id: str) -> BatchPress:
    batch_id, _colon, action = action_id.removeprefix(BATCH_PREFIX).partition(":")
    return BatchPress(batch_id, action)


class Refused(Exception):
    """A press or submission that decides nothing; its message tells the presser why."""
