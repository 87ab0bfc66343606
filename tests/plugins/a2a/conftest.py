"""A hub with the A2A connector on, in this process, and a person with a token.

The hub runs its serving hooks (``test_app``), so the connector's loop runs beside the
remote agents of ``peers``; everything crosses real loopback sockets except the person's
JSON API calls, which go through Quart's test client.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import a2a
import pytest
from a2a.server.agent_execution.active_task import ActiveTask
from quart.typing import TestAppProtocol, TestClientProtocol

from hub.config import load_settings
from hub.host.app import create_app

SECRET = "a2a-test-secret-" + "s" * 32
_numbers = itertools.count()
_SDK = Path(a2a.__file__).parent


def _from_the_sdk(task: asyncio.Task[Any]) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    return code is not None and Path(code.co_filename).is_relative_to(_SDK)


@pytest.fixture(autouse=True)
async def _no_remote_task_outlives_its_test() -> AsyncIterator[None]:
    """Fail a test that leaves a test remote's a2a-sdk tasks running, and end them here.

    Such a task, once unreferenced, is closed by the garbage collector in whatever thread
    collects, and there it can wait forever on a culsans queue lock (``peers._stop`` says
    how); a worker of the default executor stuck so keeps the loop from ever closing. So a
    leak is an error in the test that made it, and is ended in this loop, not left to chance.
    """
    yield
    left = [task for task in asyncio.all_tasks() if not task.done() and _from_the_sdk(task)]
    if not left:
        return
    frames = [getattr(task.get_coro(), "cr_frame", None) for task in left]
    owners = {frame.f_locals.get("self") for frame in frames if frame is not None}
    closing = [owner.aclose() for owner in owners if isinstance(owner, ActiveTask)]
    for task in left:
        task.cancel()
    await asyncio.wait([asyncio.ensure_future(c) for c in closing] + left, timeout=10)
    names = sorted(task.get_coro().__qualname__ for task in left)
    raise AssertionError(f"a test remote left a2a-sdk tasks running: {names}")


@dataclass
class Person:
    client: TestClientProtocol
    workspace_id: str
    token: str
    browser: TestClientProtocol  # signed in with the session cookie, for the pages

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def url(self, path: str) -> str:
        return f"/api/v1/workspaces/{self.workspace_id}{path}"

    async def get(self, path: str) -> tuple[int, Any]:
        response = await self.client.get(self.url(path), headers=self.headers)
        return response.status_code, await response.get_json()

    async def post(self, path: str, json: Any = None) -> tuple[int, Any]:
        response = await self.client.post(self.url(path), headers=self.headers, json=json)
        return response.status_code, await response.get_json()

    async def add_remote(self, url: str, **extra: Any) -> dict[str, Any]:
        status, body = await self.post("/remote-agents", {"url": url, **extra})
        assert status == 201, body
        return body  # type: ignore[no-any-return]

    async def task_for(self, agent_id: str, title: str = "Paint the button", **extra: Any) -> str:
        status, body = await self.post(
            "/tasks", {"title": title, "targetAgentId": agent_id, **extra}
        )
        assert status == 201, body
        return str(body["id"])

    async def wait_task(
        self, task_id: str, until: Callable[[dict[str, Any]], bool], within_s: float = 20.0
    ) -> dict[str, Any]:
        """The task's detail once ``until`` holds (checked on each poll), or fail."""
        detail: dict[str, Any] = {}

        async def poll() -> None:
            nonlocal detail
            while True:
                _, detail = await self.get(f"/tasks/{task_id}")
                if until(detail):
                    return
                await asyncio.sleep(0.05)

        try:
            await asyncio.wait_for(poll(), within_s)
        except TimeoutError:
            raise AssertionError(f"task never got there; last seen: {detail}") from None
        return detail


class Hubs:
    """Start a hub (``await hubs.start(**settings)``) and stop it; one runs at a time, as
    the ORM keeps one global context per process. Whatever runs is stopped at the end."""

    def __init__(self, database_url: str, data_dir: Path) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        self._running: Any = None

    async def start(self, **overrides: Any) -> TestAppProtocol:
        await self.stop()
        settings = load_settings(
            **{
                "database_url": self.database_url,
                "data_dir": self.data_dir,
                "secret_key": SECRET,
                "a2a_enabled": True,
                "outbound_allow_private": True,
                "a2a_poll_interval_s": 0.05,
                **overrides,
            }
        )
        self._running = create_app(settings).test_app()
        return await self._running.__aenter__()  # type: ignore[no-any-return]

    async def stop(self) -> None:
        if self._running is not None:
            running, self._running = self._running, None
            await running.__aexit__(None, None, None)


@pytest.fixture
async def hubs(database_url: str, tmp_path: Path) -> AsyncIterator[Hubs]:
    hubs = Hubs(database_url, tmp_path)
    yield hubs
    await hubs.stop()


@pytest.fixture
async def hub(hubs: Hubs) -> TestAppProtocol:
    return await hubs.start()


async def sign_up(app: TestAppProtocol, name: str = "person") -> Person:
    client = app.test_client()
    email = f"{name}{next(_numbers)}@example.com"
    response = await client.post(
        "/api/v1/auth/register",
        json={"email": email, "password": "correct horse battery", "displayName": name},
    )
    assert response.status_code == 201, await response.get_data()
    ids = await response.get_json()
    response = await client.post("/api/v1/auth/tokens", json={"name": "tests"})
    token = (await response.get_json())["token"]
    return Person(app.test_client(), ids["workspaceId"], token, client)


@pytest.fixture
async def person(hub: TestAppProtocol) -> Person:
    return await sign_up(hub)
