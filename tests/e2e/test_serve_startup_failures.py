"""`lineup serve` that cannot start says why in one line, with a diagnostic code and a next
step, and exits with the status of its class of cause: 2 a setting, 3 the database, 4 the
address to listen on. Each case is a real `lineup serve` process."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hub.testing import free_port

pytestmark = pytest.mark.same_on_every_database


def serve(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hub.cli", "serve"],
        env={
            **os.environ,
            "LINEUP_HOST": "127.0.0.1",
            "LINEUP_PORT": str(free_port()),
            "LINEUP_DATA_DIR": str(tmp_path),
            "LINEUP_DATABASE_URL": f"sqlite://{tmp_path / 'hub.sqlite3'}",
            "LINEUP_SECRET_KEY": "startup-secret-" + "k" * 32,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line(result: subprocess.CompletedProcess[str], code: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error [{code}]: ") and " next: " in lines[0], lines[0]
    return lines[0]


def test_a_bad_setting_exits_2(tmp_path: Path) -> None:
    result = serve(tmp_path, LINEUP_SIGNUP="sometimes")
    assert result.returncode == 2
    assert "LINEUP_SIGNUP" in one_line(result, "configuration_error")


def test_an_unreachable_database_exits_3_without_its_password(tmp_path: Path) -> None:
    url = f"postgres://hub:hunter2secret@127.0.0.1:{free_port()}/lineup"
    result = serve(tmp_path, LINEUP_DATABASE_URL=url)
    assert result.returncode == 3
    line = one_line(result, "database_unreachable")
    assert "LINEUP_DATABASE_URL" in line and "hunter2secret" not in line


def test_a_database_that_cannot_be_migrated_exits_3(tmp_path: Path) -> None:
    # Another program's table where the first migration creates the hub's.
    with sqlite3.connect(tmp_path / "hub.sqlite3") as other:
        other.execute("CREATE TABLE workspace (something_else TEXT)")
    result = serve(tmp_path)
    assert result.returncode == 3
    assert "lineup migrate" in one_line(result, "migration_failed")


def test_a_port_in_use_exits_4(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        result = serve(tmp_path, LINEUP_PORT=str(port))
    assert result.returncode == 4
    assert "LINEUP_PORT" in one_line(result, "port_in_use")
