"""The bus: bounded queues, slow subscribers dropped with a resync point, no waiting."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hub.core.log.bus import EventBus, PublishedEvent, SubscriberDropped


def event(sequence: int, workspace: str = "ws_a", recipient: str | None = None) -> PublishedEvent:
    return PublishedEvent(workspace, sequence, "note.added", recipient, {"sequence": sequence})


async def test_subscribers_get_their_workspace_only() -> None:
    bus = EventBus()
    mine, theirs = bus.subscribe("ws_a"), bus.subscribe("ws_b")
    bus.publish(event(1))
    assert (await mine.get()).sequence == 1
    assert theirs.get_nowait() is None


async def test_every_subscriber_sends_the_same_text_serialised_once() -> None:
    bus = EventBus()
    first, second = bus.subscribe("ws_a"), bus.subscribe("ws_a")
    published = PublishedEvent("ws_a", 1, "note.added", None, {"payload": {"text": "été"}})
    bus.publish(published)
    one, other = await first.get(), await second.get()
    assert one.text() is other.text()
    assert one.text() == '{"payload":{"text":"été"}}'
    assert json.loads(one.text()) == published.envelope


async def test_a_filter_selects_events() -> None:
    bus = EventBus()
    agent = bus.subscribe("ws_a", accepts=lambda e: e.recipient_agent_id == "agt_1")
    bus.publish(event(1, recipient="agt_2"))
    bus.publish(event(2, recipient="agt_1"))
    assert (await agent.get()).sequence == 2
    assert agent.get_nowait() is None


async def test_an_addressed_subscription_is_offered_its_addressee_s_events_only() -> None:
    bus = EventBus()
    whole = bus.subscribe("ws_a")
    agent_1, agent_2 = (bus.subscribe("ws_a", addressee=a) for a in ("agt_1", "agt_2"))
    elsewhere = bus.subscribe("ws_b", addressee="agt_1")
    for sequence, addressee in enumerate((None, "agt_1", "agt_2", "agt_1"), start=1):
        bus.publish(replace(event(sequence), addressee=addressee))
    assert [(await whole.get()).sequence for _ in range(4)] == [1, 2, 3, 4]
    assert [(await agent_1.get()).sequence for _ in range(2)] == [2, 4]
    assert (await agent_2.get()).sequence == 3
    assert agent_1.get_nowait() is None and agent_2.get_nowait() is None
    assert elsewhere.get_nowait() is None
    agent_1.close()
    bus.publish(replace(event(5), addressee="agt_1"))
    assert agent_1.get_nowait() is None
    assert bus.subscriber_count("ws_a") == 2


async def test_a_revocation_is_addressed_to_the_revoked_agent(db: str) -> None:
    from datetime import UTC, datetime

    from hub.core.log.envelopes import to_published
    from hub.core.log.fresh_rows import fresh
    from hub.core.store.models import Event

    now = datetime.now(UTC)
    revoked = fresh(
        Event,
        workspace_id="ws_a",
        sequence=9,
        id="evt_9",
        type="agent.revoked",
        actor="user:usr_1",
        payload={"agentId": "agt_1"},
        occurred_at=now,
        recorded_at=now,
    )
    assert to_published(revoked).addressee == "agt_1"


async def test_a_slow_subscriber_is_dropped_and_told_where_to_resume() -> None:
    bus = EventBus(queue_size=3)
    slow, fast = bus.subscribe("ws_a"), bus.subscribe("ws_a", queue_size=100)
    bus.publish(event(1))
    assert (await slow.get()).sequence == 1
    for sequence in range(2, 10):  # the publisher never waits, however far behind `slow` is
        bus.publish(event(sequence))
    with pytest.raises(SubscriberDropped) as dropped:
        await slow.get()
    assert dropped.value.resync_from == 1
    assert bus.subscriber_count("ws_a") == 1
    assert [fast.get_nowait().sequence for _ in range(9)] == list(range(1, 10))  # type: ignore[union-attr]


async def test_closing_unsubscribes() -> None:
    bus = EventBus()
    with bus.subscribe("ws_a"):
        assert bus.subscriber_count() == 1
    assert bus.subscriber_count() == 0


async def test_a_failing_listener_does_not_stop_delivery() -> None:
    bus = EventBus()
    seen: list[int] = []

    def broken(_: PublishedEvent) -> None:
        raise RuntimeError("boom")

    bus.add_listener(broken)
    bus.add_listener(lambda e: seen.append(e.sequence))
    subscription = bus.subscribe("ws_a")
    bus.publish(event(7))
    assert seen == [7]
    assert (await subscription.get()).sequence == 7
