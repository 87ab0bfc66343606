"""Installing the hub hook into a Codex home: merged in, trusted, and taken out exactly."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from hub.coding_agents import codex_home
from hub.coding_agents.codex_home import CodexHomeError

pytestmark = pytest.mark.same_on_every_database

COMMAND = "/opt/lineup/bin/lineup-hook codex --wait 30"

PERSON_CONFIG = """\
# my settings
model = "o3"  # the one I like

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:abc"

[features]
plugins = false
"""

PERSON_HOOKS = {
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-me.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "beep"}]}],
    },
    "description": "my hooks",
}


def person_home(tmp_path: Path) -> Path:
    (tmp_path / "config.toml").write_text(PERSON_CONFIG)
    (tmp_path / "hooks.json").write_text(json.dumps(PERSON_HOOKS))
    return tmp_path


def read_hooks(home: Path) -> dict:
    return json.loads((home / "hooks.json").read_text())


def state(home: Path) -> dict:
    return tomllib.loads((home / "config.toml").read_text()).get("hooks", {}).get("state", {})


def test_install_adds_one_trusted_hook_per_event_and_keeps_everything_else(tmp_path):
    home = person_home(tmp_path)

    assert codex_home.install(home, COMMAND, 40) is True

    hooks = read_hooks(home)
    assert hooks["description"] == "my hooks"
    assert hooks["hooks"]["Notification"] == PERSON_HOOKS["hooks"]["Notification"]
    # Ours goes after the person's, so their hook keeps its key (and its trust).
    assert hooks["hooks"]["Stop"][0] == PERSON_HOOKS["hooks"]["Stop"][0]
    trust = state(home)
    assert trust["/elsewhere/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:abc"}
    for event in codex_home.EVENTS:
        groups = hooks["hooks"][event]
        ours = groups[-1]["hooks"]
        # The gates wait for a person; the reports are short, SessionEnd as short as Codex
        # lets it be.
        timeout = {"PermissionRequest": 40, "PreToolUse": 40, "SessionEnd": 3}.get(event, 30)
        assert ours == [{"type": "command", "command": COMMAND, "timeout": timeout}]
        key = codex_home.hook_key(home / "hooks.json", event, len(groups) - 1, 0)
        assert trust[key] == {"trusted_hash": codex_home.trust_hash(event, COMMAND, timeout)}
    text = (home / "config.toml").read_text()
    assert text.startswith(PERSON_CONFIG.split("[features]")[0])
    assert "# the one I like" in text


def test_install_twice_changes_nothing(tmp_path):
    home = person_home(tmp_path)
    codex_home.install(home, COMMAND, 40)
    before = {name: (home / name).read_bytes() for name in ("hooks.json", "config.toml")}

    assert codex_home.install(home, COMMAND, 40) is False

    assert {name: (home / name).read_bytes() for name in before} == before


def test_install_with_a_new_command_replaces_ours(tmp_path):
    home = person_home(tmp_path)
    codex_home.install(home, COMMAND, 40)

    assert codex_home.install(home, "lineup-hook codex --wait 5", 10) is True

    stop = read_hooks(home)["hooks"]["Stop"]
    assert [group["hooks"][0]["command"] for group in stop] == [
        "notify-me.sh",
        "lineup-hook codex --wait 5",
    ]
    hashes = {entry["trusted_hash"] for entry in state(home).values()}
    assert codex_home.trust_hash("PermissionRequest", COMMAND, 40) not in hashes
    assert codex_home.trust_hash("PermissionRequest", "lineup-hook codex --wait 5", 10) in hashes


def test_uninstall_takes_out_exactly_what_install_added(tmp_path):
    home = person_home(tmp_path)
    codex_home.install(home, COMMAND, 40)

    assert codex_home.uninstall(home) is True

    assert read_hooks(home) == PERSON_HOOKS
    assert (home / "config.toml").read_text() == PERSON_CONFIG
    assert codex_home.uninstall(home) is False


def test_uninstall_moves_the_trust_of_hooks_that_came_after_ours(tmp_path):
    home = person_home(tmp_path)
    codex_home.install(home, COMMAND, 40)
    # The person adds a hook after ours and trusts it.
    hooks = read_hooks(home)
    hooks["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    (home / "hooks.json").write_text(json.dumps(hooks))
    later_key = codex_home.hook_key(home / "hooks.json", "Stop", 2, 0)
    with (home / "config.toml").open("a") as config:
        config.write(f'\n[hooks.state."{later_key}"]\ntrusted_hash = "sha256:later"\n')

    codex_home.uninstall(home)

    assert [group["hooks"][0]["command"] for group in read_hooks(home)["hooks"]["Stop"]] == [
        "notify-me.sh",
        "later.sh",
    ]
    moved_key = codex_home.hook_key(home / "hooks.json", "Stop", 1, 0)
    assert state(home)[moved_key] == {"trusted_hash": "sha256:later"}
    assert later_key not in state(home)


def test_into_an_empty_home_and_out_again_leaves_no_hooks_file(tmp_path):
    assert codex_home.install(tmp_path, COMMAND, 40) is True
    assert set(read_hooks(tmp_path)["hooks"]) == set(codex_home.EVENTS)

    assert codex_home.uninstall(tmp_path) is True

    assert not (tmp_path / "hooks.json").exists()
    assert (tmp_path / "config.toml").read_text() == ""


def test_trust_hash_is_the_digest_codex_reports():
    # Reported by `codex app-server` (0.171.0) hooks/list as currentHash for this hook.
    assert codex_home.trust_hash(
        "PermissionRequest", "/tmp/probe/hook.py PermissionRequest", 30
    ) == ("sha256:89aca42bccdf24302acbfd8c17501918ce51fd78a542845cee681c55e753a349")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("hooks.json", b"{not json"),
        ("hooks.json", b'{"hooks": []}'),
        ("hooks.json", b'{"hooks": {"Stop": {}}}'),
        ("hooks.json", b'{"hooks": {"Stop": [], "x": "\xff"}}'),
        ("config.toml", b"model = \n"),
        ("config.toml", b"hooks = 3\n"),
        ("config.toml", b"hooks = { state = {} }\n"),
        ("config.toml", b'model = "\xff"\n'),
    ],
)
def test_unreadable_files_are_refused_and_nothing_changes(tmp_path, name, text):
    home = person_home(tmp_path)
    (home / name).write_bytes(text)
    before = {path.name: path.read_bytes() for path in home.iterdir()}

    with pytest.raises(CodexHomeError) as raised:
        codex_home.install(home, COMMAND, 40)

    assert raised.value.code == "codex_config_unreadable"
    assert {path.name: path.read_bytes() for path in home.iterdir()} == before


@pytest.mark.parametrize(
    ("command", "timeout", "code"),
    [
        ("notify-me.sh", 40, "codex_hook_command_invalid"),
        ("'unclosed", 40, "codex_hook_command_invalid"),
        (COMMAND, 0, "codex_hook_timeout_invalid"),
    ],
)
def test_bad_arguments_change_nothing(tmp_path, command, timeout, code):
    with pytest.raises(CodexHomeError) as raised:
        codex_home.install(tmp_path, command, timeout)

    assert raised.value.code == code
    assert list(tmp_path.iterdir()) == []
