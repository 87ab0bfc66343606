"""Merging the hub's hooks into a Claude Code settings file, and taking them out again."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.coding_agents.claude_settings import (
    HOOK_EVENTS,
    SettingsFileError,
    install,
    is_hub_hook,
    uninstall,
)

pytestmark = pytest.mark.same_on_every_database

COMMAND = "'/opt/lineup/.venv/bin/lineup-hook' claude-code --wait 900"
OTHER_COMMAND = "'/home/ana/new-venv/bin/lineup-hook' claude-code --wait 60"

# A file as a person keeps it: their own keys before and after "hooks", their own hooks on
# two of the hub's events and on one the hub does not use, and a group shaped oddly.
PERSONAL: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
    },
    "statusLine": {"type": "command", "command": "echo ok"},
}


def write(path: Path, settings: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=4) + "\n")


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        hook
        for group in settings["hooks"].get(event, [])
        for hook in group["hooks"]
        if is_hub_hook(hook)
    ]


def test_install_adds_one_hook_per_event_and_keeps_everything_else(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    write(path, PERSONAL)

    assert install(path, COMMAND, gate_timeout_s=900) is True

    settings = read(path)
    assert list(settings) == ["model", "permissions", "hooks", "statusLine"]
    for key in ("model", "permissions", "statusLine"):
        assert settings[key] == PERSONAL[key]
    for event in HOOK_EVENTS:
        (hook,) = ours(settings, event)
        assert hook == {
            "type": "command",
            "command": COMMAND,
            "timeout": 900 if event in ("PreToolUse", "PermissionRequest") else 30,
        }
    # The person's groups come first and are unchanged; the hub's follows.
    assert settings["hooks"]["PreToolUse"][0] == PERSONAL["hooks"]["PreToolUse"][0]
    assert settings["hooks"]["PreToolUse"][1]["matcher"] == "*"
    assert settings["hooks"]["Stop"][0] == PERSONAL["hooks"]["Stop"][0]
    assert "matcher" not in settings["hooks"]["Stop"][1]
    assert settings["hooks"]["Notification"] == PERSONAL["hooks"]["Notification"]


def test_only_keys_claude_codes_schema_knows_are_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install(path, COMMAND, gate_timeout_s=900, report_timeout_s=10)

    for event, groups in read(path)["hooks"].items():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}, event
            for hook in group["hooks"]:
                assert set(hook) == {"type", "command", "timeout"}
                assert hook["timeout"] > 0


def test_second_install_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, PERSONAL)
    install(path, COMMAND, gate_timeout_s=900)
    before = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))
    stamp = path.stat().st_mtime_ns

    assert install(path, COMMAND, gate_timeout_s=900) is False
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == stamp


def test_second_install_keeps_its_place_when_the_person_added_a_group_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    install(path, COMMAND, gate_timeout_s=900)
    settings = read(path)
    settings["hooks"]["PreToolUse"].append(
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}
    )
    write(path, settings)

    assert install(path, COMMAND, gate_timeout_s=900) is False


def test_install_with_another_command_replaces_the_hubs_hooks(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, PERSONAL)
    install(path, COMMAND, gate_timeout_s=900)

    assert install(path, OTHER_COMMAND, gate_timeout_s=60, report_timeout_s=5) is True

    settings = read(path)
    for event in HOOK_EVENTS:
        (hook,) = ours(settings, event)
        assert hook["command"] == OTHER_COMMAND
    assert ours(settings, "PreToolUse")[0]["timeout"] == 60
    assert ours(settings, "Stop")[0]["timeout"] == 5
    assert settings["hooks"]["PreToolUse"][0] == PERSONAL["hooks"]["PreToolUse"][0]


def test_uninstall_gives_back_the_original_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, PERSONAL)
    install(path, COMMAND, gate_timeout_s=900)

    assert uninstall(path) is True
    assert read(path) == PERSONAL
    assert list(read(path)) == list(PERSONAL)
    assert uninstall(path) is False


def test_uninstall_of_a_file_that_held_only_the_hubs_hooks(tmp_path: Path) -> None:
    path = tmp_path / "deep" / ".claude" / "settings.json"
    install(path, COMMAND, gate_timeout_s=900)

    assert uninstall(path) is True
    assert read(path) == {}


def test_uninstall_keeps_a_persons_hook_that_shares_a_group_with_the_hubs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    install(path, COMMAND, gate_timeout_s=900)
    settings = read(path)
    settings["hooks"]["PostToolUse"][0]["hooks"].append({"type": "command", "command": "log.sh"})
    write(path, settings)

    uninstall(path)

    assert read(path) == {
        "hooks": {
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "log.sh"}]}]
        }
    }


def test_uninstall_leaves_a_missing_file_missing(tmp_path: Path) -> None:
    assert uninstall(tmp_path / "settings.json") is False
    assert not (tmp_path / "settings.json").exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "is not a JSON object"),
        ('{"hooks": []}', "'hooks' that is not an object"),
        ('{"hooks": {"Stop": {"hooks": []}}}', "'hooks.Stop' that is not a list"),
    ],
)
def test_a_file_the_hub_cannot_read_is_refused_and_left_alone(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)

    changes: list[Callable[[], bool]] = [
        lambda: install(path, COMMAND, gate_timeout_s=900),
        lambda: uninstall(path),
    ]
    for change in changes:
        with pytest.raises(SettingsFileError) as raised:
            change()
        assert str(path) in str(raised.value)
        assert problem in str(raised.value)
        assert "run the command again" in str(raised.value)
        assert path.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_command_that_is_not_the_hubs_hook_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the hub's hook for claude-code"):
        install(tmp_path / "settings.json", "some-other-hook", gate_timeout_s=900)
    assert not (tmp_path / "settings.json").exists()


@pytest.mark.parametrize(
    ("command", "hub"),
    [
        (COMMAND, True),
        ("lineup-hook claude-code", True),
        ("/usr/bin/lineup-hook claude-code --wait 1", True),
        ("lineup-hook codex", False),
        ("my-lineup-hook claude-code", False),
        ("echo lineup-hook claude-code", False),
        ("'/opt/venv/bin/python' -I -S /opt/hub/coding_agents/hook.py claude-code --wait 9", True),
        ("/opt/venv/bin/python3 -I -S /opt/hub/coding_agents/hook.py codex --wait 9", False),
        ("echo /opt/hub/coding_agents/hook.py claude-code", False),
        ("'unterminated", False),
    ],
)
def test_the_hubs_hook_is_known_by_the_program_it_runs(command: str, hub: bool) -> None:
    assert is_hub_hook({"type": "command", "command": command}) is hub


def test_the_file_keeps_its_mode_and_a_symlink_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    write(real, PERSONAL)
    real.chmod(0o600)
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)

    install(link, COMMAND, gate_timeout_s=900)

    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert ours(read(real), "Stop")
