"""The SDK's parts on their own: backoff, delivery ledger, pending uplinks, state file."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hub.protocol.lap import Ack
from hub.sdk.backoff import Backoff
from hub.sdk.errors import AuthenticationFailed, HubRefused
from hub.sdk.ids import derived_id
from hub.sdk.ledger import DeliveryLedger
from hub.sdk.pending import PendingUplinks
from hub.sdk.state import AgentState, StateStore, normalise_hub_url


def test_backoff_grows_to_its_cap_and_jitters_below_it() -> None:
    draws: list[tuple[float, float]] = []

    def draw(low: float, high: float) -> float:
        draws.append((low, high))
        return high / 2

    backoff = Backoff(initial_s=0.5, maximum_s=4.0, draw=draw)
    delays = [backoff.next_delay() for _ in range(6)]
    assert [high for _, high in draws] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert all(low == 0.0 for low, _ in draws)
    assert delays == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    backoff.reset()
    assert backoff.cap() == 0.5


def test_backoff_spreads_a_crowd_over_the_whole_window() -> None:
    crowd = [Backoff(initial_s=1, maximum_s=8) for _ in range(50)]
    for backoff in crowd:
        for _ in range(3):
            backoff.next_delay()
    delays = [backoff.next_delay() for backoff in crowd]  # all at the 8 s cap now
    assert all(0 <= d <= 8 for d in delays)
    assert len({round(d, 6) for d in delays}) > 40


def test_backoff_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        Backoff(initial_s=0)


def test_ledger_skips_repeats_and_holds_the_watermark_below_unfinished_work() -> None:
    ledger = DeliveryLedger()
    assert ledger.begin(3) and ledger.begin(7) and ledger.begin(9)
    assert not ledger.begin(7)  # in flight
    ledger.finish(9)
    assert ledger.watermark == 2 and ledger.handled == [9]
    ledger.finish(3)
    assert ledger.watermark == 6 and ledger.handled == [9]
    assert not ledger.begin(9) and not ledger.begin(3)
    ledger.finish(7)
    assert ledger.watermark == 9 and ledger.handled == []
    assert not ledger.begin(5)  # below the watermark: already handled


def test_ledger_restored_from_disk_replays_only_unfinished_events() -> None:
    ledger = DeliveryLedger()
    for sequence in (4, 6, 8):
        ledger.begin(sequence)
    ledger.finish(6)
    ledger.finish(8)
    restored = DeliveryLedger(ledger.watermark, ledger.handled)  # 4 never finished
    assert restored.watermark == 3
    assert restored.begin(4)
    assert not restored.begin(6) and not restored.begin(8)
    assert restored.begin(10)


def test_ledger_reset_forgets_what_it_knew() -> None:
    ledger = DeliveryLedger(5, [7])
    ledger.reset(100)
    assert ledger.watermark == 100 and ledger.handled == []
    assert not ledger.begin(7) and ledger.begin(101)


async def test_pending_uplinks_keep_order_and_the_first_envelope_of_an_id() -> None:
    pending = PendingUplinks()
    first = pending.add({"id": "a", "n": 1})
    pending.add({"id": "b", "n": 2})
    again = pending.add({"id": "a", "n": 99})
    assert [e["id"] for e in pending.envelopes()] == ["a", "b"]
    assert pending.envelopes()[0]["n"] == 1
    assert pending.get("a") == {"id": "a", "n": 1} and pending.get("z") is None
    assert pending.acknowledged(Ack(id="a", sequence=5))
    assert (await first).sequence == 5 and (await again).sequence == 5
    assert not pending.acknowledged(Ack(id="a", sequence=5))  # already settled
    refused = pending.add({"id": "c"})
    refusal = HubRefused("no", code="illegal_transition", hint="read the status")
    assert pending.refused("c", refusal)
    with pytest.raises(HubRefused) as caught:
        await refused
    assert caught.value.code == "illegal_transition" and caught.value.hint == "read the status"
    assert caught.value.message == "no"
    assert [e["id"] for e in pending.envelopes()] == ["b"]


async def test_pending_uplinks_restored_are_resent_and_settle() -> None:
    pending = PendingUplinks([{"id": "x"}, {"id": "y"}])
    assert len(pending) == 2 and "x" in pending
    waiter = pending.add({"id": "x"})
    pending.acknowledged(Ack(id="x", duplicate=True))
    assert (await asyncio.wait_for(waiter, 1)).duplicate


def test_a_refusal_carries_the_hubs_message_code_hint_and_details() -> None:
    refusal = HubRefused.from_frame(
        {
            "id": "evt_1",
            "code": "task_not_accepted",
            "message": "Task is still queued.",
            "hint": "Send task.accepted first.",
            "taskId": "task_1",
        }
    )
    assert (refusal.message, refusal.code, refusal.hint) == (
        "Task is still queued.",
        "task_not_accepted",
        "Send task.accepted first.",
    )
    assert refusal.details == {"taskId": "task_1"}
    said = "[task_not_accepted] Task is still queued. (next: Send task.accepted first.)"
    assert str(refusal) == said
    bare = HubRefused.from_frame({})
    assert (bare.code, bare.hint, str(bare)) == ("error", "", "[error] the hub refused the frame")
    assert isinstance(AuthenticationFailed("no", code="unauthorized"), HubRefused)


def test_state_file_is_private_atomic_and_keyed_by_hub(tmp_path: Path) -> None:
    store = StateStore.for_hub("http://127.0.0.1:8000/", "demo", tmp_path / "cfg")
    assert store.load("http://127.0.0.1:8000").credential is None
    state = AgentState(hub="http://127.0.0.1:8000", credential="secret", last_sequence=7)
    store.save(state)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert list(store.path.parent.iterdir()) == [store.path]  # no temporary left behind
    loaded = StateStore.for_hub("ws://127.0.0.1:8000", "demo", tmp_path / "cfg").load(
        "127.0.0.1:8000"
    )
    assert loaded.credential == "secret" and loaded.last_sequence == 7
    other = StateStore.for_hub("http://127.0.0.1:9000", "demo", tmp_path / "cfg")
    assert other.path != store.path
    assert StateStore.for_hub("http://127.0.0.1:8000", "exec", tmp_path / "cfg").path != store.path


def test_state_written_for_another_hub_is_not_used(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.json")
    store.save(AgentState(hub="http://a.example:1", credential="a-secret"))
    assert store.load("http://b.example:1").credential is None


def test_state_keeps_a_bounded_number_of_answers() -> None:
    state = AgentState(hub="http://h:1")
    for n in range(600):
        state.keep_resolution(f"int_{n}", {"n": n})
    assert len(state.resolutions) == 500 and "int_599" in state.resolutions
    assert "int_0" not in state.resolutions


def test_hub_addresses_normalise() -> None:
    assert normalise_hub_url("https://Hub.Example.com/x") == "https://hub.example.com"
    assert normalise_hub_url("wss://hub.example.com") == "https://hub.example.com"
    with pytest.raises(ValueError):
        normalise_hub_url("ftp://hub")


def test_derived_ids_are_stable_and_fit_the_hub() -> None:
    assert derived_id("int", "task_1.3") == derived_id("int", "task_1.3")
    assert derived_id("int", "task_1.3") != derived_id("int", "task_1.4")
    assert len(derived_id("task", "x" * 200)) <= 40


def test_the_sdk_imports_nothing_of_the_server() -> None:
    probe = (
        "import sys, hub.sdk, hub.sdk.adapters.demo, hub.sdk.adapters.exec_command\n"
        "server = ('quart', 'hypercorn', 'tortoise', 'asyncpg', 'hub.core', 'hub.web')\n"
        "print(sorted(m for m in sys.modules if m.startswith(server)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
