"""Identifiers: a readable prefix and a ULID, e.g. ``task_01JD2X...``.

ULIDs sort by creation time, so ids listed in order read as a history, and the prefix tells
a person reading a log line what kind of object an id names. Within one millisecond they
still sort in the order they were made (the randomness counts up, as the ULID spec's
monotonic generators do): the messages of one group commit share a creation time, and a
conversation lists them by it, then by id.

The ULIDs are made here rather than by ``python-ulid``, whose monotonic generator took
5 µs an id; every event an agent sends needs two (its message's and its ack's), and in a
profile of a hundred agents writing that was a twelfth of the hub's time. This takes
about 2 µs and gives the same text (``tests/core/test_ids.py`` reads it back with
``python-ulid``).
"""

from __future__ import annotations

import os
import threading
import time

PREFIXES = {
    "workspace": "ws",
    "user": "usr",
    "membership": "mem",
    "agent": "agt",
    "pairing_code": "pair",
    "api_token": "tok",
    "user_session": "ses",
    "recovery_code": "rcv",
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
    "push_subscription": "psub",
}


# Every id column holds 40 characters (hub.core.store.models): a longer string names nothing, and
# the ORM refuses to even compare it with a column, so callers check before they look up.
MAX_ID_LENGTH = 40


def could_be_an_id(value: str) -> bool:
    return 0 < len(value) <= MAX_ID_LENGTH


def new_id(kind: str) -> str:
    return f"{PREFIXES[kind]}_{new_ulid()}"


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # base 32 without I, L, O, U
_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]  # 10 bits → 2 characters
_PAIR_SHIFTS = tuple(range(115, 4, -10))  # the twelve pairs between the first and last 5 bits
_lock = threading.Lock()
_last_ms = 0
_last_randomness = 0


def new_ulid() -> str:
    """A ULID's 26 characters: 48 bits of Unix milliseconds, then 80 random bits, greater
    than every one made before it in this process."""
    global _last_ms, _last_randomness
    ms = time.time_ns() // 1_000_000
    with _lock:
        if ms <= _last_ms:  # the same millisecond, or the clock stepped back: count up
            ms, randomness = _last_ms, _last_randomness + 1
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        _last_ms, _last_randomness = ms, randomness
    # Added, not or-ed: randomness counted past 80 bits carries into the time, and the id
    # still sorts after the one before it.
    value = (ms << 80) + randomness
    # 130 bits as 26 characters: 5 bits, twelve pairs of 10 bits, 5 bits.
    return (
        _CROCKFORD[value >> 125]
        + "".join([_PAIRS[(value >> shift) & 1023] for shift in _PAIR_SHIFTS])
        + _CROCKFORD[value & 31]
    )
