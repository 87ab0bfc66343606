"""``lineup backup`` and ``lineup restore`` as an operator runs them, against a real hub."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from hub.core.store.models import Task, Workspace
from hub.host.backups import MANIFEST, code_migration, hub_version
from hub.testing import HubProcess, eventually
from tests.sdk.live import live_hub


def lineup(process: HubProcess, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hub.cli", *argv],
        env=process.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_a_backup_restored_brings_the_hub_back_and_agents_resync(
    db: str, tmp_path: Path
) -> None:
    archive = tmp_path / "backups" / "hub.tar.gz"
    async with live_hub(db, tmp_path / "hub") as hub:
        vapid = hub.process.data_dir / "vapid_private.pem"
        push_keys = vapid.read_text()  # made by the hub at its first start
        async with hub.agent(tmp_path / "agent", "Builder") as agent:
            kept = await hub.task(agent.agent_id or "", "Made before the backup")
            made = await asyncio.to_thread(lineup, hub.process, "backup", str(archive))
            assert made.returncode == 0, made.stderr
            assert archive.stat().st_mode & 0o777 == 0o600
            lost = await hub.task(agent.agent_id or "", "Made after the backup")
            old_epoch = (await Workspace.get(id=hub.workspace_id)).epoch
            assert agent.state.epoch == old_epoch

            await asyncio.to_thread(hub.process.stop)
            vapid.unlink()
            done = await asyncio.to_thread(lineup, hub.process, "restore", str(archive))
            assert done.returncode == 0, done.stderr
            assert "agents and browsers will resync" in done.stdout
            await asyncio.to_thread(hub.process.start)

            new_epoch = (await Workspace.get(id=hub.workspace_id)).epoch
            assert new_epoch != old_epoch
            await eventually(lambda: agent.state.epoch == new_epoch, within=20)
        assert await Task.exists(id=kept)
        assert not await Task.exists(id=lost)
        data_dir = hub.process.data_dir
        assert (data_dir / "secret_key").read_text().strip() == hub.secret_key
        assert vapid.read_text() == push_keys


@pytest.mark.same_on_every_database
async def test_a_backup_of_another_version_is_refused(db: str, tmp_path: Path) -> None:
    archive = tmp_path / "hub.tar.gz"
    async with live_hub(db, tmp_path / "hub") as hub:
        made = await asyncio.to_thread(lineup, hub.process, "backup", str(archive))
        assert made.returncode == 0, made.stderr
    with tarfile.open(archive, "r:gz") as original:
        manifest = json.loads(original.extractfile(MANIFEST).read())  # type: ignore[union-attr]
        assert manifest["hubVersion"] == hub_version()
        assert manifest["migration"] == code_migration()
        members = [(m, original.extractfile(m)) for m in original.getmembers()]
        older = tmp_path / "older.tar.gz"
        with tarfile.open(older, "w:gz") as rewritten:
            for member, content in members:
                data = content.read() if content else b""
                if member.name == MANIFEST:
                    data = json.dumps({**manifest, "hubVersion": "0.0.1"}).encode()
                    member.size = len(data)
                rewritten.addfile(member, io.BytesIO(data))
    refused = await asyncio.to_thread(lineup, hub.process, "restore", str(older))
    assert refused.returncode == 2
    assert refused.stderr.startswith("error [backup_version_mismatch]: ")
    assert "made by LineUp Hub 0.0.1" in refused.stderr
