"""The agent against a small local LAP server (``FakeHub``): pairing, resends, replays,
resuming after a restart, cancellation, errors. The real hub is in test_end_to_end.py."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import pytest

from hub.sdk import Agent, AuthenticationFailed, Backoff, Downlink, HubRefused, NotPaired, Task
from hub.sdk.state import StateStore
from tests.sdk.fake_hub import FakeHub, eventually

HUB_CODE = "ABCD-EFGH"


def fast() -> Backoff:
    return Backoff(initial_s=0.01, maximum_s=0.1)


def make_agent(hub: FakeHub, state_dir: Path, **options: Any) -> Agent:
    return Agent(hub.url, state_dir=state_dir, backoff=fast(), name="tester", **options)


def resolved(interaction_id: str, option: str = "approve") -> dict[str, Any]:
    return {
        "interactionId": interaction_id,
        "response": {"optionId": option},
        "respondedBy": "user:usr_1",
        "respondedAt": "2026-07-24T12:00:00Z",
        "via": "web",
    }


def task_frame(task_id: str = "task_1", conversation: str | None = "conv_1") -> dict[str, Any]:
    task: dict[str, Any] = {"id": task_id, "title": "Tidy dependencies", "description": "d"}
    if conversation:
        task["conversationId"] = conversation
    return {"task": task}


async def test_pairing_saves_the_credential_privately_and_the_next_run_needs_no_code(
    tmp_path: Path,
) -> None:
    async with FakeHub(pairing_codes={HUB_CODE}) as hub:
        async with make_agent(hub, tmp_path, pairing_code=HUB_CODE) as agent:
            assert agent.agent_id == "agt_1" and agent.connected
        store = StateStore.for_hub(hub.url, "default", tmp_path)
        assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
        assert store.load(hub.url).credential == "cred-agt_1"
        async with make_agent(hub, tmp_path) as again:
            assert again.agent_id == "agt_1"
        assert "pairingCode" in hub.hellos[0] and "pairingCode" not in hub.hellos[1]


async def test_a_refused_code_and_no_code_at_all_are_clear_errors(tmp_path: Path) -> None:
    async with FakeHub() as hub:
        with pytest.raises(AuthenticationFailed) as refused:
            await make_agent(hub, tmp_path, pairing_code="WRONG-CODE").start()
        assert refused.value.code == "pairing_code_unknown"
        with pytest.raises(NotPaired):
            await make_agent(hub, tmp_path).start()
        with pytest.raises(AuthenticationFailed):
            await make_agent(hub, tmp_path, credential="forged").start()


async def test_the_demo_flow_reports_every_step_once(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}) as hub:
        agent = make_agent(hub, tmp_path, credential="c")
        done = asyncio.Event()

        @agent.on_task
        async def work(task: Task) -> None:
            await task.accept()
            await task.progress(30, "scanning")
            await task.progress(60, "planning")
            child = await task.create_child("Scan the repository")
            await child.report("running")
            answer = await task.request_approval(
                "Run the migration?", description="why", impact="prod", risk="high"
            )
            assert answer.approved and answer.via == "web"
            await task.post_message("done: plan attached")
            async with task.stream_message() as stream:
                await stream.write("hello ")
                await stream.write("world")
            await task.add_artifact("plan.md", "https://example.invalid/plan.md")
            done.set()

        async with agent:
            await hub.push("agt_1", "task.assigned", task_frame())
            await eventually(lambda: hub.of_type("interaction.requested"))
            card = hub.of_type("interaction.requested")[0]["payload"]["interaction"]
            assert card["risk"] == "high" and [o["id"] for o in card["options"]] == [
                "approve",
                "reject",
            ]
            await hub.push("agt_1", "interaction.resolved", resolved(card["id"]))
            await asyncio.wait_for(done.wait(), 10)
            await eventually(
                lambda: any(
                    e["payload"].get("status") == "succeeded"
                    for e in hub.of_type("task.status_changed")
                )
            )
        kinds = [e["type"] for e in hub.stored.values()]
        assert kinds.count("task.accepted") == 1 and kinds.count("artifact.created") == 1
        messages = hub.of_type("message.create")
        assert [m["payload"]["content"] for m in messages] == ["done: plan attached", "hello world"]
        deltas = [f["payload"]["delta"] for f in hub.received if f["type"] == "message.delta"]
        assert deltas == ["hello ", "world"]
        assert all(m["payload"]["conversationId"] == "conv_1" for m in messages)


async def test_unacknowledged_uplinks_are_resent_with_their_original_ids(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}, swallow={"task.accepted"}) as hub:
        agent = make_agent(hub, tmp_path, credential="c")
        accepted = asyncio.Event()

        @agent.on_task
        async def work(task: Task) -> None:
            await task.accept()
            accepted.set()

        async with agent:
            await hub.push("agt_1", "task.assigned", task_frame())
            await eventually(lambda: any(f["type"] == "task.accepted" for f in hub.received))
            assert agent.pending_uplinks == 1 and not accepted.is_set()
            hub.swallow.clear()
            hub.cut()
            await asyncio.wait_for(accepted.wait(), 10)
        sent = [f["id"] for f in hub.received if f["type"] == "task.accepted"]
        assert len(sent) == 2 and len(set(sent)) == 1
        assert len(hub.of_type("task.accepted")) == 1


async def test_replayed_downlinks_are_handled_once_and_in_order(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}) as hub:
        agent = make_agent(hub, tmp_path, credential="c")
        seen: list[int] = []
        release = asyncio.Event()

        @agent.on_task
        async def work(task: Task) -> None:
            await release.wait()  # holds the watermark: everything after it is replayed

        @agent.on("message.delivered")
        async def note(event: Downlink) -> None:
            assert event.sequence is not None
            seen.append(event.sequence)

        async with agent:
            await hub.push("agt_1", "task.assigned", task_frame())
            for n in range(5):
                await hub.push("agt_1", "message.delivered", {"message": {"id": f"m{n}"}})
            await eventually(lambda: len(seen) == 5)
            for _ in range(3):
                before = hub.connections
                hub.cut()
                await eventually(lambda b=before: hub.connections > b and agent.connected)
            await hub.push("agt_1", "message.delivered", {"message": {"id": "last"}})
            await eventually(lambda: len(seen) == 6)
            assert agent.duplicates_dropped >= 15  # each reconnect replayed the five again
            release.set()
            await eventually(lambda: agent.last_sequence == 7)
        assert seen == [2, 3, 4, 5, 6, 7]


async def test_a_restarted_agent_resumes_its_task_and_repeats_no_step(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}) as hub:
        steps: list[str] = []

        def adapter() -> Agent:
            agent = make_agent(hub, tmp_path, credential="c")

            @agent.on_task
            async def work(task: Task) -> None:
                await task.accept()
                await task.progress(50, "half way")
                await task.create_child("child")
                answer = await task.request_approval("Go on?", risk="high")
                steps.append(f"answer:{answer.option_id}")
                await task.add_artifact("result", "https://example.invalid/r")

            return agent

        first = await adapter().start()
        await hub.push("agt_1", "task.assigned", task_frame())
        await eventually(lambda: hub.of_type("interaction.requested"))
        await first.close()  # the adapter stops while waiting for a person
        card = hub.of_type("interaction.requested")[0]["payload"]["interaction"]
        await hub.push("agt_1", "interaction.resolved", resolved(card["id"]))  # decided offline

        async with adapter():
            await eventually(
                lambda: (
                    hub.of_type("artifact.created")
                    and any(
                        e["payload"].get("status") == "succeeded"
                        for e in hub.of_type("task.status_changed")
                    )
                )
            )
        assert steps == ["answer:approve"]
        kinds = [e["type"] for e in hub.stored.values()]
        for kind in ("task.accepted", "task.child_created", "interaction.requested"):
            assert kinds.count(kind) == 1, kind
        assert len(hub.of_type("interaction.requested")) == 1
        resent = [f for f in hub.received if f["type"] == "task.accepted"]
        assert len(resent) == 2  # the second run re-sent it under the same id: stored once


async def test_a_cancel_request_stops_the_waiting_task_and_is_confirmed(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}) as hub:
        agent = make_agent(hub, tmp_path, credential="c")

        @agent.on_task
        async def work(task: Task) -> None:
            await task.accept()
            await task.request_approval("Proceed?")
            raise AssertionError("must not continue after a cancel")

        async with agent:
            await hub.push("agt_1", "task.assigned", task_frame())
            await eventually(lambda: hub.of_type("interaction.requested"))
            await hub.push("agt_1", "task.cancel_requested", {"taskId": "task_1", "reason": "no"})
            # A task this agent is not running is confirmed cancelled by the SDK itself.
            await hub.push("agt_1", "task.cancel_requested", {"taskId": "task_other"})
            await eventually(lambda: len(hub.of_type("task.status_changed")) == 2)
        statuses = {
            e["payload"]["taskId"]: e["payload"]["status"]
            for e in hub.of_type("task.status_changed")
        }
        assert statuses == {"task_1": "cancelled", "task_other": "cancelled"}


async def test_a_refused_step_raises_the_hubs_code_and_fails_the_task(tmp_path: Path) -> None:
    refusal = ("task_not_accepted", "Task is still queued.", "Send task.accepted first.")
    async with FakeHub(credentials={"c": "agt_1"}, refuse={"artifact.created": refusal}) as hub:
        agent = make_agent(hub, tmp_path, credential="c")
        caught: list[HubRefused] = []

        @agent.on_task
        async def work(task: Task) -> None:
            try:
                await task.add_artifact("x", "https://example.invalid/x")
            except HubRefused as error:
                caught.append(error)
                raise

        async with agent:
            await hub.push("agt_1", "task.assigned", task_frame())
            await eventually(lambda: hub.of_type("task.status_changed"))
        assert (
            caught[0].code == "task_not_accepted" and caught[0].hint == "Send task.accepted first."
        )
        failed = hub.of_type("task.status_changed")[0]["payload"]
        assert failed["status"] == "failed" and failed["error"].startswith("task_not_accepted")


async def test_another_epoch_means_resync_not_a_silent_skip(tmp_path: Path) -> None:
    async with FakeHub(credentials={"c": "agt_1"}) as hub:
        resyncs: list[Downlink] = []
        async with make_agent(hub, tmp_path, credential="c") as agent:
            await hub.push("agt_1", "message.delivered", {"message": {"id": "m"}})
            await eventually(lambda: agent.last_sequence == 1)
        hub.epoch = "epoch-2"  # say, the hub's database was restored from a backup
        hub.sequence = 40
        agent = make_agent(hub, tmp_path, credential="c")
        agent.on("system.resync_required")(lambda e: _append(resyncs, e))
        async with agent:
            await eventually(lambda: len(resyncs) == 1)
            assert agent.last_sequence == 40 and agent.state.epoch == "epoch-2"


async def _append(into: list[Downlink], event: Downlink) -> None:
    into.append(event)


async def test_heartbeats_follow_the_interval_the_hub_asks_for(tmp_path: Path) -> None:
    hub = FakeHub(credentials={"c": "agt_1"}, heartbeat_interval_s=0.05)
    async with hub, make_agent(hub, tmp_path, credential="c") as agent:
        await eventually(lambda: sum(f["type"] == "agent.heartbeat" for f in hub.received) >= 3)
        assert agent.heartbeat_interval_s == 0.05
