"""SQLite on a read-only file or a full disk: a clear error, nothing half-written.

Running as root, file modes do not stop the hub, so the read-only file is made immutable
(``chattr +i``); the full disk is a tmpfs a little larger than the database. Both are
undone however the test ends; the file then passes ``PRAGMA integrity_check`` and holds
every acknowledged event once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.database import sqlite_path
from hub.core.work.conversations import create_conversation
from hub.testing import HubProcess, opened
from tests.core.agent_setup import SECRET_KEY, paired_agent
from tests.figures import EVENTS_VERIFIED, FAULTS_INJECTED, record
from tests.plugins.lap_client import lap_url

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        shutil.which("chattr") is None or shutil.which("mount") is None,
        reason="needs chattr and mount",
    ),
]


@pytest.fixture
def sqlite_file(database_url: str, is_postgres: bool) -> Path:
    if is_postgres:
        pytest.skip("a SQLite storage fault")
    path = sqlite_path(database_url)
    assert path is not None
    return path


async def prepared(database_url: str) -> tuple[str, str, str, str]:
    """A person, their token, a paired agent's credential and its conversation."""
    async with opened(database_url):
        user, workspace = await create_user("disk@example.com", "correct horse")
        _, token = await create_api_token(user, "faults")
        agent, credential = await paired_agent(workspace)
        conversation = await create_conversation(
            workspace.id, "notes", [agent.id], by=f"user:{user.id}"
        )
    return workspace.id, token, credential, conversation.id


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def stored_ids(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return [row[0] for row in connection.execute("SELECT id FROM event")]


async def test_a_read_only_database_file_gives_a_clear_error(
    database_url: str, sqlite_file: Path, tmp_path: Path
) -> None:
    workspace_id, token, _, _ = await prepared(database_url)
    before = stored_ids(sqlite_file)
    with immutable(sqlite_file):
        record(FAULTS_INJECTED)
        hub = HubProcess(database_url, tmp_path / "hub", LINEUP_SECRET_KEY=SECRET_KEY)
        try:
            hub.start()
            async with httpx.AsyncClient(
                base_url=hub.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
            ) as http:
                # The database still reads; a write says what is wrong and what to do.
                assert (await http.get("/healthz")).status_code == 200
                response = await http.post(
                    f"/api/v1/workspaces/{workspace_id}/conversations",
                    json={"title": "never stored", "agentIds": []},
                )
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["code"] == "storage_read_only" and "write access" in error["hint"]
        finally:
            hub.stop()
    assert integrity(sqlite_file) == "ok"
    assert stored_ids(sqlite_file) == before


@contextlib.contextmanager
def small_disk(root: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes: writes past it fail with ENOSPC, as on a full disk."""
    mount_point = root / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


async def test_a_full_disk_gives_a_clear_error_and_keeps_what_was_acknowledged(
    database_url: str, sqlite_file: Path, tmp_path: Path
) -> None:
    _, _, credential, conversation_id = await prepared(database_url)
    size = sqlite_file.stat().st_size + 512 * 1024
    with small_disk(tmp_path, size) as disk:
        database = disk / "hub.sqlite3"
        shutil.copyfile(sqlite_file, database)
        hub = HubProcess(f"sqlite://{database}", tmp_path / "hub", LINEUP_SECRET_KEY=SECRET_KEY)
        try:
            hub.start()
            record(FAULTS_INJECTED)
            acked, refusal = await fill(hub, credential, conversation_id)
            # The hub is still up and answers.
            async with httpx.AsyncClient(timeout=20) as http:
                assert (await http.get(hub.url + "/healthz")).status_code in (200, 503)
        finally:
            hub.stop()
        assert refusal is not None, "the disk never filled"
        assert refusal["code"] == "storage_full", refusal
        assert acked, "nothing fitted on the disk"
        assert integrity(database) == "ok"
        stored = stored_ids(database)
    assert all(stored.count(envelope_id) == 1 for envelope_id in acked)
    assert refusal["id"] not in stored
    record(EVENTS_VERIFIED, len(acked))


async def fill(
    hub: HubProcess, credential: str, conversation_id: str
) -> tuple[list[str], dict[str, str] | None]:
    """Send 50 KB messages until the hub refuses one; the acknowledged ids and the refusal."""
    acked: list[str] = []
    async with connect(
        lap_url(hub.url),
        additional_headers={"Authorization": f"Bearer {credential}"},
        proxy=None,
        max_size=None,
    ) as socket:
        await socket.send(json.dumps({"id": "hello", "type": "agent.hello"}))
        while json.loads(await asyncio.wait_for(socket.recv(), 10))["type"] != "agent.welcome":
            pass
        for n in range(200):  # 200 × 50 KB is far more than the disk holds
            envelope_id = f"big-{n}"
            await socket.send(
                json.dumps(
                    {
                        "id": envelope_id,
                        "type": "message.create",
                        "conversationId": conversation_id,
                        "payload": {"content": f"{n:04d}" + "x" * 50_000},
                    }
                )
            )
            while True:
                frame = json.loads(await asyncio.wait_for(socket.recv(), 20))
                if frame.get("payload", {}).get("id") == envelope_id:
                    break
            if frame["type"] != "ack":
                return acked, frame["payload"]
            acked.append(envelope_id)
    return acked, None
