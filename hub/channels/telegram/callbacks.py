"""What a button says when pressed: the callback data of card and batch messages.

Telegram holds at most 64 bytes of callback data per button, so each action is one letter
after the opaque id of the row it acts on (8 characters) — short, and meaningless without
that server-side row. The letters are on the wire: messages sent long ago still carry them,
so they never change.

* a card: ``<card>:<action>[:<n>]``, n an option's position (``CardAction``)
* a batch: ``batch:<batch>:<action>`` (``BatchAction``)
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

BATCH_PREFIX = "batch:"


class CardAction(StrEnum):
    # Pick option n; a high-risk approval first asks CONFIRM, a review's "request changes"
    # first asks for a comment by forced reply.
    PICK = "o"
    CONFIRM = "c"  # confirm option n
    CANCEL = "x"  # take the pending confirmation back
    TICK = "t"  # tick or untick option n of a multi-select
    SUBMIT = "s"  # submit the ticks


class BatchAction(StrEnum):
    APPROVE_ALL = "a"
    CONFIRM = "c"  # confirm approving all
    REJECT_ALL = "r"
    CANCEL = "x"  # take the pending confirmation back


# The actions that name an option by its position.
WITH_OPTION = frozenset({CardAction.PICK, CardAction.CONFIRM, CardAction.TICK})


class CardPress(NamedTuple):
    short_id: str
    action: str  # as pressed: data from elsewhere may carry no CardAction at all
    position: int  # of the option pressed; -1 when the data names none


class BatchPress(NamedTuple):
    batch_id: str
    action: str


def card_data(short_id: str, action: CardAction, index: int | None = None) -> str:
    data = f"{short_id}:{action}"
    return data if index is None else f"{data}:{index}"


def batch_data(batch_id: str, action: BatchAction) -> str:
    return f"{BATCH_PREFIX}{batch_id}:{action}"


def is_batch(data: str) -> bool:
    return data.startswith(BATCH_PREFIX)


def parse_card(data: str) -> CardPress:
    short_id, _colon, rest = data.partition(":")
    action, _colon, argument = rest.partition(":")
    return CardPress(short_id, action, int(argument) if argument.isdigit() else -1)


def parse_batch(data: str) -> BatchPress:
    batch_id, _colon, action = data.removeprefix(BATCH_PREFIX).partition(":")
    return BatchPress(batch_id, action)
