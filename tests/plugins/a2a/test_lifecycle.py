"""A remote task across a hub restart, a remote that goes down, and a remote that needs a login."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hub.core.store.remote_models import RemoteCall
from tests.plugins.a2a.conftest import Hubs, sign_up
from tests.plugins.a2a.peers import Base, Endless, Slow, serve_remote
from tests.plugins.a2a.test_tasks import ended


class NeedsLogin(Base):
    """Asks to be authorised out of band, and completes when told that happened."""

    async def work(self, context, updater):  # type: ignore[no-untyped-def]
        from a2a.types.a2a_pb2 import Part

        if len(self.inputs) == 1:
            message = [Part(text="Sign in at https://auth.example/device")]
            await updater.requires_auth(updater.new_agent_message(message))
            return
        await updater.complete(updater.new_agent_message([Part(text="Signed in, done.")]))


@pytest.mark.parametrize(("version", "streaming"), [("1.0", True), ("0.3", True), ("1.0", False)])
async def test_a_restart_mid_task_resumes_from_the_ledger(
    hubs: Hubs, version: str, streaming: bool
) -> None:
    executor = Slow()
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        person = await sign_up(await hubs.start())
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"], "Write the report")
        await person.wait_task(task_id, lambda d: d["summary"] == "step 1 of 3")
        ledger = await RemoteCall.get(id=task_id)
        assert ledger.remote_task_id and ledger.last_state == "working"

        await hubs.stop()  # the remote carries on while the hub is away
        executor.release.set()
        person.client = (await hubs.start()).test_client()

        detail = await person.wait_task(task_id, lambda d: d["status"] == "succeeded")
    assert detail["summary"] == "Report ready."
    assert [a["name"] for a in detail["artifacts"]] == ["report.md"]
    assert executor.inputs == ["Write the report"]  # resumed, not sent again
    resumed = await RemoteCall.get(id=task_id)
    assert resumed.remote_task_id == ledger.remote_task_id and resumed.finished
    kinds = [e["type"] for e in detail["timeline"]]
    assert kinds.count("task.accepted") == 1 and kinds.count("artifact.created") == 1


async def test_a_remote_that_goes_down_is_unreachable_then_fails_the_task(hubs: Hubs) -> None:
    person = await sign_up(await hubs.start(agent_grace_period_s=1.5))
    async with serve_remote(Endless(), streaming=False) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        await person.wait_task(task_id, lambda d: d["status"] == "running")
    # The server is gone: polls fail.
    seen = {}

    async def offline() -> bool:
        nonlocal seen
        _, seen = await person.get(f"/agents/{agent['id']}")
        return seen["status"] == "offline"

    detail = await person.wait_task(task_id, lambda d: d["status"] == "failed")
    assert detail["error"] == "remote_unreachable"
    assert await offline()
    _, remotes = await person.get("/remote-agents")
    [shown] = remotes["agents"]
    assert shown["remote"]["reachable"] is False
    assert shown["connectionLost"]["code"] == "remote_unreachable"
    assert shown["connectionLost"]["message"] == "Remote unreachable"
    reasons = [
        e["payload"].get("reason") for e in (await person.get("/events?after=0"))[1]["events"]
    ]
    assert "remote_unreachable" in reasons


@pytest.mark.parametrize("answer", ["continue", "cancel"])
async def test_auth_required_asks_the_person_to_sign_in_elsewhere(hubs: Hubs, answer: str) -> None:
    executor = NeedsLogin()
    person = await sign_up(await hubs.start())
    async with serve_remote(executor) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, lambda d: d["status"] == "waiting_for_human")
        [card] = detail["interactions"]
        assert card["type"] == "choice" and card["card"].get("input") is None  # asks no secret
        assert "never paste a password or key here" in card["card"]["description"]
        assert "https://auth.example/device" in card["card"]["description"]
        status, _ = await person.post(f"/interactions/{card['id']}/respond", {"optionId": answer})
        assert status == 200
        detail = await person.wait_task(
            task_id, lambda d: d["status"] in {"succeeded", "cancelled"}
        )
    assert detail["status"] == ("succeeded" if answer == "continue" else "cancelled")
    if answer == "continue":
        assert "sk-" not in executor.inputs[-1] and "authorisation" in executor.inputs[-1]


async def test_a_remote_back_after_losing_its_tasks_is_online_and_the_task_ends(
    hubs: Hubs,
) -> None:
    person = await sign_up(await hubs.start())
    async with serve_remote(Endless(), streaming=False) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        await person.wait_task(task_id, lambda d: d["status"] == "running")
        port = int(remote.url.rsplit(":", 1)[1])
    seen: dict[str, Any] = {}

    async def status_is(wanted: str) -> None:
        nonlocal seen
        while True:
            _, seen = await person.get(f"/agents/{agent['id']}")
            if seen["status"] == wanted:
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(status_is("offline"), 20)
    # The same agent starts again on the same address, its memory of tasks gone.
    async with serve_remote(Endless(), streaming=False, port=port):
        detail = await person.wait_task(task_id, ended)
        await asyncio.wait_for(status_is("online"), 20)
    assert detail["status"] == "failed" and detail["error"] == "remote_task_lost"
