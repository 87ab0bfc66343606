"""Pushes instead of polls: ``lineup serve`` as its own process and real a2a-sdk remotes
whose SDK sender posts each change to the hub's webhook over loopback sockets.

A poll interval of 600 s makes the hub's slowest read of a quiet task 30 s apart
(``updates.poll_bound``); each wait here for what a push brings gives up well before that,
so what arrives in time arrived by push, not by a poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.testing import HubProcess
from plugins.a2a_connector.updates import poll_bound
from plugins.a2a_connector.webhook import push_token, push_url
from tests.plugins.a2a.peers import AsksWhenReleased, Remote, serve_remote

QUIET_POLL_S = 600.0
WAIT_S = 20.0  # each wait for a push's effect; well under the bound below
assert poll_bound(QUIET_POLL_S) > WAIT_S


@dataclass
class Hub:
    process: HubProcess
    api: httpx.AsyncClient  # the person's JSON API, in their workspace
    browser: httpx.AsyncClient  # the person signed in, for the pages
    workspace_id: str
    agent_id: str = ""

    async def page(self, path: str) -> str:
        response = await self.browser.get(f"/w/{self.workspace_id}{path}")
        assert response.status_code == 200, response.text
        return response.text

    @property
    def secret_key(self) -> str:
        return self.process.env["LINEUP_SECRET_KEY"]

    async def task(self, task_id: str) -> dict[str, Any]:
        response = await self.api.get(f"/tasks/{task_id}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    async def until(
        self, task_id: str, check: Callable[[dict[str, Any]], bool], within_s: float = WAIT_S
    ) -> dict[str, Any]:
        detail: dict[str, Any] = {}

        async def poll() -> None:
            nonlocal detail
            while True:
                detail = await self.task(task_id)
                if check(detail):
                    return
                await asyncio.sleep(0.05)

        try:
            await asyncio.wait_for(poll(), within_s)
        except TimeoutError:
            raise AssertionError(f"the task never got there; last seen: {detail}") from None
        return detail

    async def start_task(self, remote: Remote) -> str:
        agent = (await self.api.post("/remote-agents", json={"url": remote.url})).json()
        self.agent_id = agent["id"]
        created = await self.api.post(
            "/tasks", json={"title": "Paint the button", "targetAgentId": agent["id"]}
        )
        assert created.status_code == 201, created.text
        return str(created.json()["id"])

    async def answer(self, detail: dict[str, Any], text: str) -> None:
        card = next(i for i in detail["interactions"] if i["status"] == "pending")
        response = await self.api.post(f"/interactions/{card['id']}/respond", json={"text": text})
        assert response.status_code == 200, response.text


@contextlib.asynccontextmanager
async def running_hub(
    database_url: str, data_dir: Path, *, poll_interval_s: float = QUIET_POLL_S, **env: str
) -> AsyncIterator[Hub]:
    process = HubProcess(
        database_url,
        data_dir,
        LINEUP_A2A_ENABLED="true",
        LINEUP_OUTBOUND_ALLOW_PRIVATE="true",
        LINEUP_A2A_POLL_INTERVAL_S=str(poll_interval_s),
        **env,
    )
    await asyncio.to_thread(process.start)
    try:
        async with httpx.AsyncClient(base_url=process.url) as web:
            registered = await web.post(
                "/api/v1/auth/register",
                json={"email": "p@example.com", "password": "correct horse battery"}
                | {"displayName": "P"},
            )
            workspace = registered.json()["workspaceId"]
            token = (await web.post("/api/v1/auth/tokens", json={"name": "t"})).json()["token"]
            api = httpx.AsyncClient(
                base_url=f"{process.url}/api/v1/workspaces/{workspace}",
                headers={"Authorization": f"Bearer {token}"},
            )
            async with api:
                yield Hub(process, api, web, workspace)
    finally:
        await asyncio.to_thread(process.stop)


async def settled(remote: Remote) -> None:
    """Once the remote has sent no push and answered no read for half a second."""
    assert remote.pushes is not None

    def seen() -> tuple[int, int]:
        assert remote.pushes is not None
        return len(remote.pushes.sent), len(remote.methods)

    async def quiet() -> None:
        last = seen()
        while True:
            await asyncio.sleep(0.5)
            if seen() == last:
                return
            last = seen()

    await asyncio.wait_for(quiet(), WAIT_S)


def waiting(detail: dict[str, Any]) -> bool:
    return detail["status"] == "waiting_for_human" and any(
        i["status"] == "pending" for i in detail["interactions"]
    )


def followed_by(mode: str) -> Callable[[dict[str, Any]], bool]:
    return lambda detail: (detail["remote"] or {}).get("updates") == mode


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
        httpx.AsyncClient() as sender,
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
