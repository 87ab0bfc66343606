"""The SDK against a real hub process, over real sockets, driven through the JSON API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hub.core.store.models import Event, Interaction, InteractionStatus, Task
from hub.protocol.lap import MAX_FRAME_BYTES
from hub.sdk import Agent, AuthenticationFailed, Backoff, HubRefused
from hub.sdk.adapters import demo
from tests.sdk.live import LiveHub, live_hub


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


def sdk_agent(hub: LiveHub, state_dir: Path, **options: Any) -> Agent:
    return Agent(
        hub.url, state_dir=state_dir, backoff=Backoff(initial_s=0.05, maximum_s=0.5), **options
    )


async def events_of(workspace_id: str, **filters: Any) -> list[Event]:
    return await Event.filter(workspace_id=workspace_id, **filters).order_by("sequence")


async def test_an_sdk_agent_pairs_works_a_task_and_its_decision_arrives_once(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="Demo")
    demo.install(agent, pause_s=0, say=lambda line: None)
    async with agent:
        assert agent.agent_id and agent.workspace_id == hub.workspace_id
        await hub.confirm(agent.agent_id, "Demo")
        conversation = await hub.conversation(agent.agent_id)
        task_id = await hub.task(agent.agent_id, "Tidy the dependencies", conversation)
        pending = await _pending_interaction(task_id)
        assert pending.payload["risk"] == "high"
        await hub.respond(pending.id, "approve")
        await _task_status(task_id, "succeeded")
    timeline = [e.type for e in await events_of(hub.workspace_id, task_id=task_id)]
    assert timeline.count("task.accepted") == 1
    assert timeline.count("interaction.requested") == 1
    assert timeline.count("interaction.resolved") == 1
    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert len(detail["children"]) == 1 and len(detail["artifacts"]) == 1
    messages = await hub.api("GET", f"/conversations/{conversation}/messages")
    assert any("Done" in m["content"] for m in messages["messages"])


async def test_an_uplink_too_large_for_the_hub_is_refused_before_it_is_sent(
    hub: LiveHub, tmp_path: Path
) -> None:
    """The hub closes a socket on a frame past MAX_FRAME_BYTES characters (1009); an SDK
    that kept and resent it would be closed again on every reconnect."""
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="Big")
    async with agent:
        assert agent.agent_id
        await hub.confirm(agent.agent_id, "Big")
        conversation = await hub.conversation(agent.agent_id)
        async with asyncio.timeout(30):
            with pytest.raises(HubRefused) as refused:
                await agent.post_message(conversation, "x" * MAX_FRAME_BYTES)
            assert refused.value.code == "frame_too_large" and refused.value.hint
            await agent.post_message(conversation, "a reasonable one")
        assert agent.connects == 1
    messages = await hub.api("GET", f"/conversations/{conversation}/messages")
    assert [m["content"] for m in messages["messages"]] == ["a reasonable one"]


async def test_a_refused_pairing_code_is_a_clear_error(hub: LiveHub, tmp_path: Path) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code="AAAA-AAAA", name="x")
    with pytest.raises(AuthenticationFailed) as refused:
        await agent.start()
    assert refused.value.code == "pairing_code_unknown" and refused.value.hint


async def test_a_cancel_from_the_person_stops_the_demo_and_is_confirmed(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="Demo")
    demo.install(agent, pause_s=0, say=lambda line: None)
    async with agent:
        assert agent.agent_id is not None
        task_id = await hub.task(agent.agent_id, "Tidy the dependencies")
        card = await _pending_interaction(task_id)
        await hub.api("POST", f"/tasks/{task_id}/cancel", {"reason": "not today"})
        await _task_status(task_id, "cancelled")
    assert (await Interaction.get(id=card.id)).status == InteractionStatus.CANCELLED
    statuses = [
        e.payload.get("status")
        for e in await events_of(hub.workspace_id, task_id=task_id, type="task.status_changed")
    ]
    assert statuses.count("cancelled") == 1 and "succeeded" not in statuses


async def test_a_revoked_agent_stops_with_a_clear_error_and_stays_out(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="x")
    await agent.start()
    assert agent.agent_id is not None
    running = asyncio.create_task(agent.run())
    await hub.api("POST", f"/agents/{agent.agent_id}/revoke")
    with pytest.raises(AuthenticationFailed) as revoked:
        await asyncio.wait_for(running, 30)
    assert revoked.value.code == "credential_revoked"
    again = sdk_agent(hub, tmp_path / "agent")  # the saved, now revoked, credential
    with pytest.raises(AuthenticationFailed) as refused:
        await again.start()
    assert refused.value.code == "credential_revoked" and refused.value.hint


async def _pending_interaction(task_id: str) -> Interaction:
    found: list[Interaction] = []

    async def look() -> bool:
        found[:] = await Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING)
        return bool(found)

    await _until(look)
    return found[0]


async def _task_status(task_id: str, status: str) -> None:
    async def look() -> bool:
        task = await Task.get(id=task_id)
        return bool(task.status == status)

    await _until(look)


async def _until(check: Any, within_s: float = 30.0) -> None:
    async with asyncio.timeout(within_s):
        while not await check():  # noqa: ASYNC110 - the state is in another process
            await asyncio.sleep(0.05)


async def test_a_task_without_a_conversation_gets_its_result_message(
    hub: LiveHub, tmp_path: Path
) -> None:
    agent = sdk_agent(hub, tmp_path / "agent", pairing_code=await hub.pairing_code(), name="Sum")

    @agent.on_task
    async def summarise(task: Any) -> None:
        await task.accept()
        await task.post_message("Three errors, all fixed.")
        await task.succeed("done")

    async with agent:
        assert agent.agent_id is not None
        task_id = await hub.task(agent.agent_id, "Summarise the logs")
        await _task_status(task_id, "succeeded")
    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert [m["content"] for m in detail["messages"]] == ["Three errors, all fixed."]
    assert detail["conversationId"] is not None
    thread = await hub.api("GET", f"/conversations/{detail['conversationId']}/messages")
    assert [m["taskId"] for m in thread["messages"]] == [task_id]
