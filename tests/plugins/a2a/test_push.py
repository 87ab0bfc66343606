"""Pushes instead of polls: ``lineup serve`` as its own process and real a2a-sdk remotes
whose SDK sender posts each change to the hub's webhook over loopback sockets; what the
webhook refuses, and why a push is only ever a hint (``pushing`` says how a wait proves a
push brought what it waited for).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from plugins.a2a_connector.webhook import push_token, push_url
from tests.plugins.a2a.peers import AsksWhenReleased, serve_remote
from tests.plugins.a2a.pushing import WAIT_S, followed_by, running_hub, settled, waiting


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_card_comes_by_push_with_no_poll_in_between(
    database_url: str, tmp_path: Path, version: str
) -> None:
    executor = AsksWhenReleased()
    async with (
        serve_remote(executor, version=version, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub") as hub,
    ):
        assert remote.pushes is not None
        task_id = await hub.start_task(remote)
        detail = await hub.until(
            task_id, lambda d: followed_by("push")(d) and d["summary"] == "Looking at it."
        )
        await settled(remote)  # the read that follows the webhook's registration is over
        get_task = "GetTask" if version == "1.0" else "tasks/get"
        reads = remote.methods.count(get_task)
        pushed = len(remote.pushes.sent)

        executor.release.clear()
        executor.release.set()  # the remote asks which colour: only a push tells the hub
        detail = await hub.until(task_id, waiting)

        card = next(i for i in detail["interactions"] if i["status"] == "pending")
        assert "Which colour should the button be?" in card["card"]["description"]
        arrived = remote.pushes.sent[pushed:]
        assert arrived, "the card came without a push"
        token = push_token(hub.secret_key, task_id)
        assert {p.url for p in arrived} == {push_url(hub.process.url, task_id)}
        assert all(p.headers["x-a2a-notification-token"] == token for p in arrived)
        assert all(p.status == 202 for p in arrived)
        # Each read after the release answered a push: none came from a timer.
        assert 1 <= remote.methods.count(get_task) - reads <= len(arrived)
        assert detail["remote"]["lastPushAt"] is not None
        html = await hub.page(f"/tasks/{task_id}")
        assert 'data-remote-updates="push"' in html
        assert "The remote agent pushes its changes to the hub." in html
        assert 'data-push="yes"' in await hub.page(f"/agents/{hub.agent_id}")

        executor.release.clear()
        await hub.answer(detail, "blue")
        await hub.until(task_id, lambda d: d["summary"] == "Painting.")
        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")

    assert detail["summary"] == "Painted it blue."
    assert executor.inputs == ["Paint the button", "blue"]
    registered = {
        "1.0": "CreateTaskPushNotificationConfig",
        "0.3": "tasks/pushNotificationConfig/set",
    }
    assert remote.methods.count(registered[version]) == 1


async def test_forged_replayed_and_stray_pushes_change_nothing(
    database_url: str, tmp_path: Path
) -> None:
    executor = AsksWhenReleased()
    async with (
        serve_remote(executor, streaming=False, push=True) as remote,
        running_hub(database_url, tmp_path / "hub") as hub,
        # A connection per post: the hub refuses a wrong token before reading the body, and
        # may then close the connection, which a pooled next post would find dead.
        httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0)) as sender,
    ):
        assert remote.pushes is not None
        task_id = await hub.start_task(remote)
        await hub.until(task_id, followed_by("push"))
        executor.release.set()
        detail = await hub.until(task_id, waiting)
        asked = remote.pushes.sent[-1]  # the push that brought the card
        executor.release.clear()
        await hub.answer(detail, "blue")
        # The remote works on and pushes that; the hub, reading at each authentic push, now
        # sees a running task.
        before = await hub.until(task_id, lambda d: d["summary"] == "Painting.")
        real = remote.pushes.sent[-1]
        token = real.headers["x-a2a-notification-token"]
        await settled(remote)  # the reads those pushes caused are over
        reads = remote.methods.count("GetTask")

        async def post(body: bytes, url: str = real.url, **headers: str) -> httpx.Response:
            return await sender.post(
                url, content=body, headers={"Content-Type": "application/json", **headers}
            )

        def with_token(value: str) -> dict[str, str]:
            return {"X-A2A-Notification-Token": value}

        forged = await post(real.body, **with_token("0" * len(token)))
        assert forged.status_code == 401
        assert forged.json()["error"]["code"] == "a2a_push_unauthorized"
        assert (await post(real.body)).status_code == 401  # no token at all
        # A token is the task's own: the right one for another task opens nothing here.
        other = push_token(hub.secret_key, "tsk_01OTHER")
        assert (await post(real.body, **with_token(other))).status_code == 401

        # Replays: the last push, and the older one that asked for the card (which, were it
        # believed, would put the task back to waiting).
        for old in (real, asked):
            replayed = await post(old.body, **with_token(token))
            assert replayed.status_code == 200, replayed.text
            assert replayed.json() == {"accepted": False, "duplicate": True}

        # A task the hub does not know, with its right token; and this task's token with a
        # body about another remote task.
        stranger = "tsk_01J0000000000000000000000"
        unknown = await post(
            real.body,
            push_url(hub.process.url, stranger),
            **with_token(push_token(hub.secret_key, stranger)),
        )
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "a2a_push_unknown_task"
        push = json.loads(real.body)
        kind = next(iter(push))
        remote_task_id = push[kind].get("taskId") or push[kind].get("id")
        elsewhere = json.dumps({kind: {**push[kind], "taskId": "t-other", "id": "t-other"}})
        assert (await post(elsewhere.encode(), **with_token(token))).status_code == 404

        assert (await post(b"<xml/>", **with_token(token))).status_code == 422
        # The host's guard on path ids holds here too: no id is that long.
        too_long = push_url(hub.process.url, "task_" + "x" * 200)
        assert (await post(real.body, too_long, **with_token(token))).status_code == 404
        too_large = await post(b" " * 1_000_001, **with_token(token))
        assert too_large.status_code == 413
        assert too_large.json()["error"]["code"] == "a2a_push_too_large"
        assert remote.methods.count("GetTask") == reads  # none of these made the hub read

        # An authentic push that lies: the task completed, with an artifact. It is a hint
        # only: the hub reads the task, which is still being painted.
        lie = {
            "statusUpdate": {
                "taskId": remote_task_id,
                "contextId": push[kind].get("contextId"),
                "status": {
                    "state": "TASK_STATE_COMPLETED",
                    "message": {"role": "ROLE_AGENT", "messageId": "m-lie", "parts": []},
                },
            },
            "artifactUpdate": {"taskId": remote_task_id, "artifact": {"artifactId": "a"}},
        }
        taken = await post(json.dumps(lie).encode(), **with_token(token))
        assert taken.status_code == 202, taken.text

        async def read_again() -> None:
            while remote.methods.count("GetTask") == reads:  # noqa: ASYNC110 - counted by the remote
                await asyncio.sleep(0.02)

        await asyncio.wait_for(read_again(), WAIT_S)
        await settled(remote)
        after = await hub.task(task_id)
        assert after["status"] == "running" and after["summary"] == "Painting."
        assert after["artifacts"] == [] and after["timeline"] == before["timeline"]

        # A sender that keeps guessing is told to stop; the remote, on the same address,
        # still gets through.
        codes = [(await post(real.body, **with_token(f"guess{n}"))).status_code for n in range(31)]
        assert codes[-1] == 429 and set(codes) == {401, 429}
        assert (await post(b"{}", **with_token(token))).status_code == 202

        executor.release.set()
        detail = await hub.until(task_id, lambda d: d["status"] == "succeeded")
    assert detail["summary"] == "Painted it blue."
    assert executor.inputs == ["Paint the button", "blue"]
