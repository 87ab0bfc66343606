"""The cyclic garbage collector, set for a long-running server once its startup is done.

A profile of a hundred agents writing to one hub on PostgreSQL put a fifth of the hub's
CPU time in the collector (21 %), and each full collection held the loop for about 150 ms.
Two things made it so:

* Every object built at startup (modules, classes, schemas, the ORM's metadata: about
  150,000 of them) is walked again by each full collection, though none of them ever
  becomes garbage.
* The young generation is collected whenever the objects allocated since the last
  collection outnumber the freed ones by 700. Eight hundred frames in flight keep more
  than that alive at any moment, so each young collection found them still in use and
  promoted them, and the old generations filled with objects that were freed a moment
  later. Each time they had grown by a quarter, a full collection ran.

``tune_for_serving`` moves what startup built into the permanent generation, which
collections skip (``gc.freeze``), and lets the young generation hold
``YOUNG_GENERATION_THRESHOLD`` objects before it is collected, above what the work in
flight usually keeps alive, so those objects are freed by reference counting before any collection
sees them. In the same profile the collector's share fell to 0.4 % and the hub's CPU time
per event by about a quarter (``benchmarks/RESULTS.md``, round 6). The price is memory:
garbage caught in reference cycles waits for the next young collection, up to that many
objects of it.

Not much higher than that: a young collection holds the loop for its whole length, which
grows with the objects it walks. At 20,000 that was 10 to 14 ms once every twenty inbox
pages, and it made the pages' p95 (43 ms for 29 ms of CPU at 5,000 tasks; each of the ten
slowest requests overlapped one). At 5,000 the collections are four times as many and at
most 3.3 ms: the same pages' p95 36 ms for the same CPU, while the 100-agent ingest kept its
rate and its few full collections (RESULTS.md, the late night of 2026-12-06).
"""

from __future__ import annotations

import gc

YOUNG_GENERATION_THRESHOLD = 5_000  # CPython's default is 700


def tune_for_serving() -> None:
    """Freeze what exists now and raise the young generation's threshold.

    Call once, after startup has built its long-lived objects and before the work begins:
    objects frozen here are never collected, even if they later become garbage.
    """
    gc.collect()  # what startup left as garbage is not worth keeping forever
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)


__all__ = ["YOUNG_GENERATION_THRESHOLD", "tune_for_serving"]
