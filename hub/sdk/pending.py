"""Uplinks sent but not yet acknowledged, kept until the hub answers.

Each entry is the exact envelope first sent, so a resend after a reconnect carries the
original ``id`` and ``occurredAt``: the hub stores an id once and answers a repeat with
``ack`` marked ``duplicate``. Entries stay in the order they were added, which is the order
they are resent in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from hub.protocol.lap import Ack
from hub.sdk.errors import HubRefused

Envelope = dict[str, Any]


class PendingUplinks:
    def __init__(self, stored: Iterable[Envelope] = ()) -> None:
        self._entries: dict[str, Envelope] = {}
        self._waiters: dict[str, list[asyncio.Future[Ack]]] = {}
        for envelope in stored:
            self._entries[str(envelope["id"])] = envelope

    def add(self, envelope: Envelope) -> asyncio.Future[Ack]:
        """Keep ``envelope`` until answered; the future gets the ``ack`` or a ``HubRefused``.

        Adding an id that is already waiting keeps the first envelope: a repeat must not
        replace what the hub may already have stored under that id.
        """
        envelope_id = str(envelope["id"])
        self._entries.setdefault(envelope_id, envelope)
        future: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(envelope_id, []).append(future)
        return future

    def __contains__(self, envelope_id: object) -> bool:
        return envelope_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def envelopes(self) -> list[Envelope]:
        """Every entry, in the order it was added (the order it is resent in)."""
        return list(self._entries.values())

    def get(self, envelope_id: str) -> Envelope | None:
        return self._entries.get(envelope_id)

    def acknowledged(self, ack: Ack) -> bool:
        """Settle the entry ``ack`` answers; False if it answers nothing we wait for."""
        if self._entries.pop(ack.id, None) is None:
            return False
        for future in self._waiters.pop(ack.id, []):
            if not future.done():
                future.set_result(ack)
        return True

    def refused(self, envelope_id: str, error: HubRefused) -> bool:
        if self._entries.pop(envelope_id, None) is None:
            return False
        for future in self._waiters.pop(envelope_id, []):
            if not future.done():
                future.set_exception(error)
        return True

    def abandon_waiters(self, error: Exception) -> None:
        """The adapter is closing: wake every caller; the entries stay to be persisted."""
        for futures in self._waiters.values():
            for future in futures:
                if not future.done():
                    future.set_exception(error)
        self._waiters.clear()
