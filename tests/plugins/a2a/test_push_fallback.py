"""When pushes do not come as they should: a hub restarted mid-task registers its webhook
again, pushes that stop give way to polling (and come back), a remote that refuses the
webhook is polled, and a push while a card waits still tells the hub the task ended."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from tests.plugins.a2a.peers import AsksWhenReleased, serve_remote
from tests.plugins.a2a.pushing import WAIT_S, followed_by, running_hub, waiting


async def test_a_killed_hub_registers_its_webhook_again_and_takes_pushes(
    database_url: str, tmp_path: Path
) -> None:
    executor = AsksWhenReleased()
    # On PostgreSQL the restarted hub takes the killed one's call over when its lease ends;
    # on SQLite at once.
    async with (
        serve_remote(executor, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub", LINEUP_A2A_LEASE_S="3") as hub,
    ):
        assert remote.pushes is not None
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("push"))
        await asyncio.to_thread(hub.process.kill)
        await asyncio.to_thread(hub.process.start)

        async def registered_again() -> None:
            while remote.methods.count("CreateTaskPushNotificationConfig") < 2:  # noqa: ASYNC110
                await asyncio.sleep(0.05)

        await asyncio.wait_for(registered_again(), WAIT_S)
        pushed = len(remote.pushes.sent)
        executor.release.set()
        detail = await hub.until(task_id, waiting)  # by push: the next bound is 30 s away
        assert len(remote.pushes.sent) > pushed
        executor.release.clear()
        await hub.answer(detail, "blue")
        await hub.until(task_id, lambda d: d["summary"] == "Painting.")
        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")
    assert detail["summary"] == "Painted it blue."
    assert executor.inputs == ["Paint the button", "blue"]


async def test_polling_resumes_when_pushes_stop_and_the_task_still_ends_right(
    database_url: str, tmp_path: Path
) -> None:
    executor = AsksWhenReleased()
    async with (
        serve_remote(executor, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub", poll_interval_s=0.05) as hub,
    ):
        assert remote.pushes is not None
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("push"))
        remote.pushes.muted = True  # the remote stops pushing (say it lost the webhook)
        sent = len(remote.pushes.sent)
        executor.release.clear()
        executor.release.set()
        # Found by the read at the bound (3.2 s here), which then says pushes stopped.
        detail = await hub.until(
            task_id, lambda d: waiting(d) and followed_by("poll-push-silent")(d)
        )
        assert len(remote.pushes.sent) == sent and remote.pushes.held_back > 0
        html = await hub.page(f"/tasks/{task_id}")
        assert 'data-remote-updates="poll-push-silent"' in html and "pushes stopped" in html

        executor.release.clear()
        await hub.answer(detail, "blue")
        await hub.until(task_id, lambda d: d["summary"] == "Painting.")
        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")
        assert len(remote.pushes.sent) == sent
    assert detail["summary"] == "Painted it blue."
    assert executor.inputs == ["Paint the button", "blue"]


async def test_pushes_that_resume_are_followed_again(database_url: str, tmp_path: Path) -> None:
    executor = AsksWhenReleased()
    async with (
        serve_remote(executor, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub", poll_interval_s=0.05) as hub,
    ):
        assert remote.pushes is not None
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("push"))
        remote.pushes.muted = True
        executor.release.clear()
        executor.release.set()
        detail = await hub.until(
            task_id, lambda d: waiting(d) and followed_by("poll-push-silent")(d)
        )
        remote.pushes.muted = False
        executor.release.clear()
        await hub.answer(detail, "red")  # the remote pushes "Painting." again
        await hub.until(task_id, lambda d: followed_by("push")(d) and d["summary"] == "Painting.")
        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")
    assert detail["summary"] == "Painted it red."


async def test_a_task_cancelled_at_the_remote_while_its_card_waits_ends_by_push(
    database_url: str, tmp_path: Path
) -> None:
    executor = AsksWhenReleased()
    async with (
        serve_remote(executor, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub") as hub,
        httpx.AsyncClient() as someone_else,
    ):
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("push"))
        executor.release.set()
        detail = await hub.until(task_id, waiting)
        # Someone cancels the task at the remote itself, not through the hub.
        cancelled = await someone_else.post(
            f"{remote.url}/a2a",
            headers={"A2A-Version": "1.0"},
            json={
                "jsonrpc": "2.0",
                "id": "1",
                "method": "CancelTask",
                "params": {"id": detail["remote"]["taskId"]},
            },
        )
        assert "error" not in cancelled.json(), cancelled.text
        detail = await hub.until(task_id, lambda d: d["status"] == "cancelled")
    assert [i["status"] for i in detail["interactions"]] == ["cancelled"]
    assert detail["remote"]["state"] == "canceled"
    assert remote.methods.count("CancelTask") == 1  # the one sent at the remote
    assert executor.inputs == ["Paint the button"]


async def test_a_remote_that_refuses_the_webhook_is_polled(
    database_url: str, tmp_path: Path
) -> None:
    executor = AsksWhenReleased()
    # Its card offers pushes, but its server keeps no webhooks.
    async with (
        serve_remote(executor, streaming=False, push=False, push_card=True) as remote,
        running_hub(database_url, tmp_path / "hub", poll_interval_s=0.05) as hub,
    ):
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("poll-push-refused"))
        executor.release.clear()
        executor.release.set()
        detail = await hub.until(task_id, waiting)
        executor.release.clear()
        await hub.answer(detail, "green")
        await hub.until(task_id, lambda d: d["summary"] == "Painting.")
        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")
    assert detail["summary"] == "Painted it green."
