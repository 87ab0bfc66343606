"""Sealed secrets: readable with the hub's key only, never in the clear at rest."""

from __future__ import annotations

import pytest

from hub.core.people.sealing import SealBroken, seal, unseal

KEY = "k" * 40


def test_round_trip_and_no_plaintext() -> None:
    sealed = seal("sk-live-123", KEY)
    assert "sk-live-123" not in sealed
    assert unseal(sealed, KEY) == "sk-live-123"
    assert seal("sk-live-123", KEY) != sealed  # a fresh nonce each time


def test_another_key_cannot_read_it() -> None:
    with pytest.raises(SealBroken) as broken:
        unseal(seal("sk-live-123", KEY), "z" * 40)
    assert broken.value.code == "sealed_secret_unreadable"


def test_tampering_is_detected() -> None:
    sealed = seal("sk-live-123", KEY)
    with pytest.raises(SealBroken):
        unseal(sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB"), KEY)
