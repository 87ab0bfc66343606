"""Group commit: appends that arrive together share a transaction, and nothing else changes.

The mechanism (``GroupCommit``) is tested on its own with a writer that records batches;
the log's use of it against the real database: sharing, a refusal in the middle of a
batch, a resend among new appends, and a subscriber that sees every event once, in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Hashable
from typing import Any

import pytest

from hub.core.errors import NotFound
from hub.core.ids import new_id
from hub.core.log.bus import EventBus
from hub.core.log.events import LOG_WRITES, AppendResult, append_event, events_after, last_sequence
from hub.core.log.group_commit import GroupCommit, Request
from hub.core.store.models import Message, Workspace

# --- the mechanism ----------------------------------------------------------------------


class RecordingWriter:
    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.release = asyncio.Event()

    async def __call__(self, key: Hashable, batch: list[Request[int]]) -> None:
        self.batches.append([request.work for request in batch])
        await self.release.wait()
        for request in batch:
            request.settle(request.work * 10)


async def test_requests_that_arrive_during_a_batch_form_the_next_one() -> None:
    writer = RecordingWriter()
    commits: GroupCommit[int] = GroupCommit(writer)
    first = asyncio.create_task(commits.submit("ws", 1))
    await asyncio.sleep(0)  # the first batch, of one, starts and waits on the writer
    await asyncio.sleep(0)
    rest = [asyncio.create_task(commits.submit("ws", n)) for n in range(2, 6)]
    await asyncio.sleep(0)
    writer.release.set()
    assert await asyncio.gather(first, *rest) == [10, 20, 30, 40, 50]
    assert writer.batches == [[1], [2, 3, 4, 5]]


async def test_batches_are_capped_and_keys_do_not_share() -> None:
    writer = RecordingWriter()
    writer.release.set()
    commits: GroupCommit[int] = GroupCommit(writer, max_batch=3)
    answers = await asyncio.gather(
        *(commits.submit("a", n) for n in range(7)), commits.submit("b", 99)
    )
    assert answers == [0, 10, 20, 30, 40, 50, 60, 990]
    assert sorted(writer.batches) == [[0, 1, 2], [3, 4, 5], [6], [99]]


async def test_a_caller_that_gave_up_before_its_batch_is_left_out() -> None:
    writer = RecordingWriter()
    commits: GroupCommit[int] = GroupCommit(writer)
    first = asyncio.create_task(commits.submit("ws", 1))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    abandoned = asyncio.create_task(commits.submit("ws", 2))
    kept = asyncio.create_task(commits.submit("ws", 3))
    await asyncio.sleep(0)
    abandoned.cancel()
    writer.release.set()
    assert await first == 10 and await kept == 30
    assert writer.batches == [[1], [3]]


async def test_a_writer_that_raises_fails_its_batch_and_serves_the_next() -> None:
    calls = 0

    async def flaky(key: Hashable, batch: list[Request[int]]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("disk on fire")
        for request in batch:
            request.settle(request.work)

    commits: GroupCommit[int] = GroupCommit(flaky)
    with pytest.raises(RuntimeError, match="disk on fire"):
        await commits.submit("ws", 1)
    assert await commits.submit("ws", 2) == 2


async def _queued_behind_a_running_batch(
    commits: GroupCommit[int], writer: RecordingWriter, queue: list[tuple[int, str, bool]]
) -> list[asyncio.Future[Any]]:
    """Start a batch of one (0), then queue ``queue`` (work, source, urgent) while it runs."""
    first = commits.enqueue("ws", 0, source="first")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert writer.batches == [[0]]
    return [first] + [
        commits.enqueue("ws", work, source=source, urgent=urgent) for work, source, urgent in queue
    ]


async def test_an_urgent_request_waits_for_the_running_batch_not_the_queue() -> None:
    writer = RecordingWriter()
    commits: GroupCommit[int] = GroupCommit(writer, max_batch=4)
    bulk = [(n, "agent", False) for n in range(1, 13)]
    futures = await _queued_behind_a_running_batch(commits, writer, [*bulk, (99, "person", True)])
    writer.release.set()
    await asyncio.gather(*futures)
    # Behind twelve queued frames of an agent, the person's request is in the next batch.
    assert writer.batches[1][0] == 99
    assert [w for batch in writer.batches for w in batch if w != 99] == list(range(13))


async def test_sources_take_turns_and_each_keeps_its_order() -> None:
    writer = RecordingWriter()
    commits: GroupCommit[int] = GroupCommit(writer, max_batch=4)
    greedy = [(n, "greedy", False) for n in range(1, 11)]
    modest = [(101, "modest", False), (102, "modest", False)]
    futures = await _queued_behind_a_running_batch(commits, writer, greedy + modest)
    writer.release.set()
    await asyncio.gather(*futures)
    # Ten frames of one agent queued first do not keep another's two out of the next batch.
    assert writer.batches[1] == [1, 101, 2, 102]
    assert [w for batch in writer.batches for w in batch if w < 100] == list(range(11))
    assert all(len(batch) <= 4 for batch in writer.batches)


# --- the log ----------------------------------------------------------------------------


async def conversation(workspace: Workspace) -> str:
    conversation_id = new_id("conversation")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation_id, "title": "Load", "agentIds": ["agt_x"]},
        actor="user:usr_x",
    )
    return conversation_id


def message(
    workspace: Workspace, conversation_id: str, n: int
) -> Coroutine[Any, Any, AppendResult]:
    return append_event(
        workspace.id,
        "message.created",
        {"messageId": f"msg-{n}", "conversationId": conversation_id, "content": f"line {n}"},
        actor="agent:agt_x",
        envelope_id=f"env-{n}",
    )


async def test_a_persons_append_is_not_queued_behind_an_agents_stream(
    workspace: Workspace,
) -> None:
    """The log's use of the two: a person's append arrives behind 600 queued agent frames and
    is stored before most of them (the workspace's sequence says when)."""
    conversation_id = await conversation(workspace)
    frames = [message(workspace, conversation_id, n) for n in range(600)]
    stream = [asyncio.ensure_future(frame) for frame in frames]
    await asyncio.sleep(0)  # the agent's frames are queued first
    person = await append_event(
        workspace.id,
        "message.created",
        {"messageId": "msg-person", "conversationId": conversation_id, "content": "stop"},
        actor="user:usr_x",
    )
    stored = await asyncio.gather(*stream)
    after_person = sum(result.sequence > person.sequence for result in stored)
    assert after_person >= 600 - 2 * LOG_WRITES.max_batch
    # The agent's own frames still keep their order.
    ordered = [result.sequence for result in stored]
    assert ordered == sorted(ordered)


async def test_two_hundred_appends_at_once_share_commits(workspace: Workspace) -> None:
    conversation_id = await conversation(workspace)
    batches_before = LOG_WRITES.batches_written
    results = await asyncio.gather(*(message(workspace, conversation_id, n) for n in range(200)))
    assert sorted(r.sequence for r in results) == list(range(2, 202))
    assert LOG_WRITES.batches_written - batches_before < 20
    assert await Message.filter(workspace_id=workspace.id).count() == 200


async def test_a_refused_append_costs_its_neighbours_nothing(workspace: Workspace) -> None:
    conversation_id = await conversation(workspace)
    refused = append_event(
        workspace.id,
        "message.created",
        {"messageId": "msg-lost", "conversationId": "cnv_missing", "content": "nowhere"},
        actor="agent:agt_x",
    )
    results = await asyncio.gather(
        *(message(workspace, conversation_id, n) for n in range(5)),
        refused,
        *(message(workspace, conversation_id, n) for n in range(5, 10)),
        return_exceptions=True,
    )
    assert isinstance(results[5], NotFound)
    stored = [r for r in results if isinstance(r, AppendResult)]
    # No gap: the refused append's sequence was never taken.
    assert sorted(r.sequence for r in stored) == list(range(2, 12))
    assert [e.sequence for e in await events_after(workspace.id, 0)] == list(range(1, 12))
    assert not await Message.filter(id="msg-lost").exists()


async def test_a_resend_among_new_appends_is_a_duplicate_of_the_stored_event(
    workspace: Workspace,
) -> None:
    conversation_id = await conversation(workspace)
    first = await message(workspace, conversation_id, 0)
    results = await asyncio.gather(
        message(workspace, conversation_id, 1),
        message(workspace, conversation_id, 0),  # the resend: same envelope id
        message(workspace, conversation_id, 2),
        message(workspace, conversation_id, 2),  # two copies in the same batch
    )
    resent, copy = results[1], results[3]
    assert resent.duplicate and resent.sequence == first.sequence
    assert copy.duplicate and copy.sequence == results[2].sequence
    assert await last_sequence(workspace.id) == 4


async def test_subscribers_see_each_event_once_in_order(workspace: Workspace) -> None:
    bus = EventBus()
    subscription = bus.subscribe(workspace.id)
    conversation_id = new_id("conversation")
    await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": conversation_id, "title": "Load", "agentIds": ["agt_x"]},
        actor="user:usr_x",
        bus=bus,
    )
    await asyncio.gather(
        *(
            append_event(
                workspace.id,
                "message.created",
                {"messageId": f"m-{n}", "conversationId": conversation_id, "content": "x"},
                actor="agent:agt_x",
                bus=bus,
            )
            for n in range(50)
        )
    )
    seen = [(await subscription.get()).sequence for _ in range(51)]
    assert seen == list(range(1, 52))


# Below and above bulk_inserts.UNNEST_FROM_ROWS: one statement per row, then from arrays.
@pytest.mark.parametrize("neighbours", [6, 12])
async def test_a_taken_message_id_in_a_shared_insert_is_named_and_refused_alone(
    workspace: Workspace, neighbours: int
) -> None:
    """Messages are inserted together when the batch ends; when that insert meets a taken
    id, the batch is written again one by one, so only the offender is refused."""
    from hub.core.errors import Conflict

    conversation_id = await conversation(workspace)
    clash = append_event(
        workspace.id,
        "message.created",
        {"messageId": "msg-3", "conversationId": conversation_id, "content": "same id"},
        actor="agent:agt_x",
        envelope_id="env-clash",
    )
    results = await asyncio.gather(
        *(message(workspace, conversation_id, n) for n in range(neighbours)),
        clash,
        return_exceptions=True,
    )
    refused = results[neighbours]
    assert isinstance(refused, Conflict) and refused.code == "id_in_use"
    assert all(isinstance(r, AppendResult) for r in results[:neighbours])
    assert await Message.filter(workspace_id=workspace.id).count() == neighbours
    assert (await Message.get(id="msg-3")).content == "line 3"
    sequences = [e.sequence for e in await events_after(workspace.id, 0)]
    assert sequences == list(range(1, neighbours + 2))


async def test_a_message_with_a_number_for_text_is_refused_alone(workspace: Workspace) -> None:
    """Message rows are built as given and inserted together: a value of the wrong type
    must be refused with its own append, not fail the shared insert of its neighbours."""
    from hub.core.errors import InvalidInput

    conversation_id = await conversation(workspace)
    odd = append_event(
        workspace.id,
        "message.created",
        {"messageId": 12345, "conversationId": conversation_id, "content": "numbered"},
        actor="agent:agt_x",
    )
    results = await asyncio.gather(
        *(message(workspace, conversation_id, n) for n in range(4)), odd, return_exceptions=True
    )
    assert isinstance(results[4], InvalidInput) and "messageId" in str(results[4])
    assert all(isinstance(r, AppendResult) for r in results[:4])
    assert await Message.filter(workspace_id=workspace.id).count() == 4


async def test_a_refusal_is_answered_only_after_what_it_met_is_committed(
    workspace: Workspace,
) -> None:
    """The second answer to a card meets the first in the same batch; its caller reads the
    card next, so it must not hear before the first is stored (nor at all, if it is not)."""
    from hub.core.log.events import queue_append

    conversation_id = await conversation(workspace)

    def same_message(envelope_id: str) -> asyncio.Future[AppendResult]:
        return queue_append(
            workspace.id,
            "message.created",
            {"messageId": "msg-once", "conversationId": conversation_id, "content": envelope_id},
            actor="agent:agt_x",
            envelope_id=envelope_id,
        )

    first, second = same_message("env-a"), same_message("env-b")
    first_was_answered: list[bool] = []
    second.add_done_callback(lambda _: first_was_answered.append(first.done()))
    assert (await first).sequence == 2
    with pytest.raises(Exception, match="taken"):
        await second
    await asyncio.sleep(0)  # done callbacks run on the loop's next turn
    assert first_was_answered == [True]
