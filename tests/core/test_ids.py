"""Ids: the hub's own ULIDs read back as ULIDs, in the order they were made."""

from __future__ import annotations

import time
from collections import Counter

from ulid import ULID

from hub.core.ids import PREFIXES, new_id, new_ulid


def test_a_ulid_is_26_characters_python_ulid_reads_back_as_now() -> None:
    before = time.time()
    made = new_ulid()
    after = time.time()
    parsed = ULID.from_str(made)
    assert str(parsed) == made
    assert before - 0.001 <= parsed.timestamp <= after + 0.001


def test_ulids_made_in_one_millisecond_still_sort_in_the_order_made() -> None:
    made = [new_ulid() for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    per_millisecond = Counter(ulid[:10] for ulid in made)  # the first 10 characters: the time
    assert max(per_millisecond.values()) > 1  # the burst did share a millisecond


def test_an_id_is_its_kind_s_prefix_and_a_ulid() -> None:
    prefix, _, ulid = new_id("message").partition("_")
    assert prefix == PREFIXES["message"]
    assert str(ULID.from_str(ulid)) == ulid
