"""No secret ever reaches the hub's log: a full run at DEBUG — sign-up, sign-in, an API
token, a pairing code, an agent's credential, a Telegram link, a wrong password and a bad
token — then every one of those values is searched for in everything the hub printed."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from hub.testing import HubProcess
from tests.core.agent_setup import SECRET_KEY
from tests.plugins.lap_client import lap_url

pytestmark = pytest.mark.timeout(120)

PASSWORD = "a very secret passphrase 4711"


async def pair(hub_url: str, code: str) -> str:
    async with connect(lap_url(hub_url), proxy=None, open_timeout=10) as socket:
        hello = {"pairingCode": code, "name": "scanner"}
        await socket.send(json.dumps({"id": "hello", "type": "agent.hello", "payload": hello}))
        while True:
            frame = json.loads(await socket.recv())
            if frame["type"] == "agent.paired":
                credential = str(frame["payload"]["credential"])
                break
    async with connect(
        lap_url(hub_url), additional_headers={"Authorization": f"Bearer {credential}"}, proxy=None
    ) as socket:
        await socket.send(json.dumps({"id": "again", "type": "agent.hello"}))
        while json.loads(await socket.recv())["type"] != "agent.welcome":
            pass
    return credential


async def test_a_full_run_logs_no_secret(database_url: str, tmp_path: Path) -> None:
    hub = HubProcess(
        database_url,
        tmp_path / "hub",
        LINEUP_SECRET_KEY=SECRET_KEY,
        LINEUP_LOG_LEVEL="DEBUG",
        LINEUP_TELEGRAM_BOT_TOKEN="123456:telegram-bot-secret-value",
        LINEUP_TELEGRAM_API_URL="http://127.0.0.1:9",  # nothing listens: never reached here
    )
    secrets: dict[str, str] = {
        "password": PASSWORD,
        "secret key": SECRET_KEY,
        "Telegram bot token": "telegram-bot-secret-value",
    }
    with hub:
        async with httpx.AsyncClient(base_url=hub.url, timeout=30) as http:
            email = "scan@example.com"
            registered = await http.post(
                "/api/v1/auth/register",
                json={"email": email, "password": PASSWORD, "displayName": "Scan"},
            )
            assert registered.status_code == 201, registered.text
            workspace = registered.json()["workspaceId"]
            wrong = await http.post("/api/v1/auth/login", json={"email": email, "password": "x"})
            assert wrong.status_code == 401
            login = await http.post(
                "/api/v1/auth/login", json={"email": email, "password": PASSWORD}
            )
            assert login.status_code == 200
            secrets["session cookie"] = login.cookies["lineup_session"]
            token = (await http.post("/api/v1/auth/tokens", json={"name": "scan"})).json()["token"]
            secrets["API token"] = token
            http.cookies.clear()
            bearer = {"Authorization": f"Bearer {token}"}
            code = await http.post(f"/api/v1/workspaces/{workspace}/pairing-codes", headers=bearer)
            assert code.status_code == 201, code.text
            secrets["pairing code"] = code.json()["code"]
            secrets["agent credential"] = await pair(hub.url, secrets["pairing code"])
            link = await http.post("/api/v1/me/channels/telegram/link", headers=bearer)
            if link.status_code == 201:
                secrets["telegram link token"] = link.json()["token"]
            bad = await http.get(
                "/api/v1/workspaces", headers={"Authorization": "Bearer lut_x" + token[5:]}
            )
            assert bad.status_code == 401
        log = hub.log()
    assert "agent.paired" in log or "scanner" in log or len(log) > 200, "the run logged nothing"
    leaked = {name for name, value in secrets.items() if value in log}
    assert not leaked, f"in the log in clear: {sorted(leaked)}"
