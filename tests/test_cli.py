"""The `lineup` command as a person runs it: a real process against a real database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.config import load_settings
from hub.core.people.credentials import hash_pairing_code, hash_token
from hub.core.store.models import ApiToken, Membership, PairingCode, User
from hub.testing import HubProcess, opened

SECRET = "cli-test-secret-" + "k" * 32


def lineup(
    database_url: str, tmp_path: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LINEUP_DATABASE_URL": database_url,
        "LINEUP_SECRET_KEY": SECRET,
        "LINEUP_DATA_DIR": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, "-m", "hub.cli", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_user_token_and_pairing_code(database_url: str, tmp_path: Path) -> None:
    created = lineup(
        database_url,
        tmp_path,
        "user",
        "create",
        "Ann@Example.com",
        "--password-stdin",
        "--display-name",
        "Ann",
        stdin="correct horse\n",
    )
    assert created.returncode == 0, created.stderr
    ids = json.loads(created.stdout)
    token = lineup(database_url, tmp_path, "token", "create", "ann@example.com")
    assert token.returncode == 0, token.stderr
    secret = token.stdout.strip()
    assert secret.startswith("lu_pat_")
    paired = lineup(database_url, tmp_path, "pair", "--workspace", ids["workspaceId"])
    assert paired.returncode == 0, paired.stderr
    code = paired.stdout.strip()
    assert len(code) == 9 and code[4] == "-"
    assert "--pair " + code in paired.stderr

    async with opened(database_url):
        user = await User.get(id=ids["userId"])
        assert user.email == "ann@example.com" and user.display_name == "Ann"
        assert user.password_hash and "correct horse" not in user.password_hash
        assert await Membership.filter(user_id=user.id, workspace_id=ids["workspaceId"]).exists()
        # Only hashes are stored.
        assert await ApiToken.filter(token_hash=hash_token(secret)).exists()
        assert not await ApiToken.filter(token_hash=secret).exists()
        stored = await PairingCode.get(workspace_id=ids["workspaceId"])
        assert stored.code_hash == hash_pairing_code(code, SECRET)
        assert stored.used_at is None


def test_tokens_are_listed_and_revoked_by_id(database_url: str, tmp_path: Path) -> None:
    assert lineup(database_url, tmp_path, "user", "create", "cy@example.com").returncode == 0
    first = lineup(database_url, tmp_path, "token", "create", "cy@example.com", "--name", "one")
    lineup(database_url, tmp_path, "token", "create", "cy@example.com", "--name", "two")
    listed = lineup(database_url, tmp_path, "token", "list", "cy@example.com")
    assert listed.returncode == 0, listed.stderr
    tokens = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [t["name"] for t in tokens] == ["one", "two"]
    assert first.stdout.strip() not in listed.stdout  # never the secret

    revoked = lineup(database_url, tmp_path, "token", "revoke", tokens[0]["id"])
    assert revoked.returncode == 0, revoked.stderr
    assert json.loads(revoked.stdout)["revokedAt"] is not None
    listed = lineup(database_url, tmp_path, "token", "list", "cy@example.com")
    assert [json.loads(line)["name"] for line in listed.stdout.splitlines()] == ["two"]
    again = lineup(database_url, tmp_path, "token", "revoke", tokens[0]["id"])
    assert again.returncode == 2 and "token_not_found" in again.stderr


def test_errors_name_a_code_and_a_next_step(database_url: str, tmp_path: Path) -> None:
    missing = lineup(database_url, tmp_path, "token", "create", "nobody@example.com")
    assert missing.returncode == 2
    assert "user_not_found" in missing.stderr and "lineup user create" in missing.stderr
    no_workspace = lineup(database_url, tmp_path, "pair", "--workspace", "ws_nope")
    assert no_workspace.returncode == 2 and "workspace_not_found" in no_workspace.stderr
    lineup(database_url, tmp_path, "user", "create", "b@example.com")
    twice = lineup(database_url, tmp_path, "user", "create", "b@example.com")
    assert twice.returncode == 2 and "email_taken" in twice.stderr


def test_a_bad_setting_stops_the_command(tmp_path: Path) -> None:
    env = {**os.environ, "LINEUP_PORT": "eighty", "LINEUP_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "hub.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "LINEUP_PORT" in result.stderr


def test_config_prints_the_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LINEUP_SECRET_KEY"}
    env["LINEUP_DATA_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "hub.cli", "config"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "LINEUP_DATABASE_URL" in result.stdout
    assert load_settings  # the table comes from the same Settings the hub loads
    # Like the agent commands, it runs anywhere without leaving a hub's secret behind.
    assert not (tmp_path / "secret_key").exists()


async def test_restored_starts_a_new_epoch(database_url: str, tmp_path: Path) -> None:
    from hub.core.store.models import Workspace

    created = lineup(database_url, tmp_path, "user", "create", "epoch@example.com")
    workspace_id = json.loads(created.stdout)["workspaceId"]
    async with opened(database_url):
        before = (await Workspace.get(id=workspace_id)).epoch
    result = lineup(database_url, tmp_path, "restored")
    assert result.returncode == 0, result.stderr
    assert "1 workspace" in result.stdout
    async with opened(database_url):
        assert (await Workspace.get(id=workspace_id)).epoch != before


async def test_agents_are_listed_confirmed_and_revoked_from_the_cli(
    database_url: str, tmp_path: Path
) -> None:
    from hub.core.agents.pairing import create_pairing_code
    from hub.core.agents.registry import redeem_pairing_code
    from hub.core.store.models import Agent

    created = lineup(database_url, tmp_path, "user", "create", "agents@example.com")
    workspace_id = json.loads(created.stdout)["workspaceId"]
    async with opened(database_url):
        code, _ = await create_pairing_code(workspace_id, secret_key=SECRET, ttl_s=600)
        agent, _ = await redeem_pairing_code(
            code, name="laptop", runtime="python", version="1", capabilities=[], secret_key=SECRET
        )
    listed = lineup(database_url, tmp_path, "agents", "list", "--workspace", workspace_id)
    assert json.loads(listed.stdout.splitlines()[0])["status"] == "pending"
    confirmed = lineup(
        database_url,
        tmp_path,
        "agents",
        "confirm",
        agent.id,
        "--workspace",
        workspace_id,
        "--name",
        "Build laptop",
    )
    assert confirmed.returncode == 0, confirmed.stderr
    assert json.loads(confirmed.stdout)["name"] == "Build laptop"
    revoked = lineup(
        database_url, tmp_path, "agents", "revoke", agent.id, "--workspace", workspace_id
    )
    assert json.loads(revoked.stdout)["status"] == "revoked"
    elsewhere = lineup(
        database_url, tmp_path, "agents", "revoke", agent.id, "--workspace", "ws_other"
    )
    assert elsewhere.returncode == 2 and "not_found" in elsewhere.stderr
    async with opened(database_url):
        assert (await Agent.get(id=agent.id)).revoked_at is not None


def _started_with(pid: int) -> tuple[list[str], dict[str, str]]:
    """A process's command line and environment as it was exec'd (Linux's /proc)."""
    proc = Path(f"/proc/{pid}")
    argv = proc.joinpath("cmdline").read_bytes().decode().split("\0")[:-1]
    pairs = proc.joinpath("environ").read_bytes().decode().split("\0")
    return argv, dict(pair.split("=", 1) for pair in pairs if "=" in pair)


@pytest.mark.parametrize(("chosen", "serving"), [(None, "malloc"), ("pymalloc", "pymalloc")])
def test_serve_runs_on_the_c_allocator_unless_the_operator_chose_one(
    database_url: str, tmp_path: Path, chosen: str | None, serving: str
) -> None:
    hub = HubProcess(database_url, tmp_path)
    hub.env.pop("PYTHONMALLOC", None)
    if chosen is not None:
        hub.env["PYTHONMALLOC"] = chosen
    hub.start()
    try:
        assert hub.process is not None
        # The process that answers is the one started: it replaced itself, keeping its id
        # (which a supervisor signals) and its command line.
        argv, environment = _started_with(hub.process.pid)
        assert argv == [sys.executable, "-m", "hub.cli", "serve"]
        assert environment["PYTHONMALLOC"] == serving
    finally:
        hub.stop()
