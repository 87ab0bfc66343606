"""`lineup serve` as its own process: migrates on start, answers /healthz, keeps data
across restarts, and stops cleanly, telling open sockets to come back (1012)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.log.events import append_event, last_sequence
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import User
from hub.testing import HubProcess, opened
from tests.plugins.lap_client import raw_agent

SECRET = "serve-secret-key-" + "s" * 32


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


async def test_serve_answers_health_and_metrics(database_url: str, tmp_path: Path) -> None:
    with HubProcess(database_url, tmp_path) as hub:
        status, body = get(hub.url + "/healthz")
        assert status == 200 and json.loads(body) == {"status": "ok"}
        status, body = get(hub.url + "/metrics")
        assert status == 200 and "lineup_agents_connected" in body
    assert hub.process is not None and hub.process.returncode == 0


async def test_websockets_decline_compression(database_url: str, tmp_path: Path) -> None:
    """An idle socket keeps no zlib state: see hub.host.websocket_compression."""
    with HubProcess(database_url, tmp_path) as hub:
        url = hub.url.replace("http://", "ws://") + "/lap/v0.1"
        async with connect(url, compression="deflate", open_timeout=10) as socket:
            assert socket.response is not None
            assert "Sec-WebSocket-Extensions" not in socket.response.headers
            await socket.send("not json")
            answer = json.loads(await socket.recv())
            assert answer["type"] == "error"


async def test_data_survives_a_restart_and_a_kill(database_url: str, tmp_path: Path) -> None:
    hub = HubProcess(database_url, tmp_path).start()
    try:
        async with opened(database_url):
            _, workspace = await create_user("keep@example.com", "correct horse")
            await append_event(workspace.id, "note.added", {"n": 1}, actor="system")
        hub.kill()
        hub.start()
        assert get(hub.url + "/healthz")[0] == 200
    finally:
        hub.stop()
    async with opened(database_url):
        assert await User.filter(email="keep@example.com").exists()
        assert await last_sequence(workspace.id) == 1


async def test_a_fresh_sqlite_file_is_created_and_migrated(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'new' / 'hub.sqlite3'}"
    with HubProcess(url, tmp_path) as hub:
        assert get(hub.url + "/healthz")[0] == 200
    assert (tmp_path / "new" / "hub.sqlite3").exists()


async def test_stopping_closes_agent_and_browser_sockets_with_1012(
    database_url: str, tmp_path: Path
) -> None:
    """Open sockets are told "service restart" at once, not held through the server's
    grace period and then cut."""
    async with opened(database_url):
        user, workspace = await create_user("stop@example.com", "correct horse")
        _, token = await create_api_token(user, "test")
        code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
        agent, credential = await redeem_pairing_code(
            code, name="worker", runtime="test", version="1", capabilities=[], secret_key=SECRET
        )
        await confirm_agent(workspace.id, agent.id, "worker", by=f"user:{user.id}")
    hub = HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET).start()
    try:
        client_url = hub.url.replace("http://", "ws://") + f"/ws/client?workspace={workspace.id}"
        async with (
            raw_agent(hub.url, credential) as (lap, agent_socket),
            connect(client_url, additional_headers={"Authorization": f"Bearer {token}"}) as browser,
        ):
            await lap.hello(runtime="test")
            assert json.loads(await browser.recv())["type"] == "client.welcome"
            stopping = asyncio.create_task(asyncio.to_thread(hub.stop))
            for socket in (agent_socket, browser):
                with pytest.raises(ConnectionClosed):
                    async with asyncio.timeout(30):
                        while True:
                            await socket.recv()
            await stopping
        assert agent_socket.close_code == 1012
        assert browser.close_code == 1012
        assert hub.process is not None and hub.process.returncode == 0
    finally:
        hub.stop()
