"""Identifiers: a readable prefix and a ULID, e.g. ``task_01JD2X...``.

ULIDs sort by creation time, so ids listed in order read as a history, and the prefix tells
a person reading a log line what kind of object an id names.
"""

from __future__ import annotations

from ulid import ULID

PREFIXES = {
    "workspace": "ws",
    "user": "usr",
    "membership": "mem",
    "agent": "agt",
    "pairing_code": "pair",
    "api_token": "tok",
    "conversation": "conv",
    "message": "msg",
    "task": "task",
    "interaction": "int",
    "artifact": "art",
    "event": "evt",
    "notification": "ntf",
    "channel_account": "chac",
    "channel_link_token": "clt",
    "invitation": "inv",
    "batch": "bat",
    "policy_rule": "pol",
}


# Every id column holds 40 characters (hub.core.models): a longer string names nothing, and
# the ORM refuses to even compare it with a column, so callers check before they look up.
MAX_ID_LENGTH = 40


def could_be_an_id(value: str) -> bool:
    return 0 < len(value) <= MAX_ID_LENGTH


def new_id(kind: str) -> str:
    return f"{PREFIXES[kind]}_{ULID()}"
