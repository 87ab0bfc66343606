"""The Claude Code harness against the real CLI: the fake model API, headless runs and the
terminal UI, each with a hook script written by the test (not the hub), so a failure here
is about the harness or the CLI, never about the hub's connector."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.coding_agents.claude_cli import (
    RecordingHook,
    claude_binary,
    hooks_settings,
    run_print,
    terminal_ui,
    write_settings,
)
from tests.coding_agents.fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = [pytest.mark.timeout(60), pytest.mark.same_on_every_database]

Hooked = Callable[..., RecordingHook]
TOUCH = ToolUse("Bash", {"command": "touch ran.txt", "description": "Create ran.txt"})


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    claude_binary()  # skips before anything is made when the CLI is not installed
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


@pytest.fixture
def hooked(tmp_path: Path) -> Iterator[Callable[..., RecordingHook]]:
    """Registers a recording hook for every event in a project's settings."""
    hooks: list[RecordingHook] = []

    def register(project: Path, answers: dict[str, dict[str, Any]]) -> RecordingHook:
        hook = RecordingHook(tmp_path / f"hook{len(hooks)}", answers)
        write_settings(project, hooks_settings(hook.command))
        hooks.append(hook)
        return hook

    yield register
    for hook in hooks:
        hook.end_leftovers()


def pre_tool_use(decision: str, reason: str, **extra: Any) -> dict[str, dict[str, Any]]:
    output = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    output |= {"permissionDecisionReason": reason, **extra}
    return {"PreToolUse": {"output": {"hookSpecificOutput": output}}}


def permission_request(behavior: str, **decision: Any) -> dict[str, dict[str, Any]]:
    output = {"hookEventName": "PermissionRequest", "decision": {"behavior": behavior, **decision}}
    return {"PermissionRequest": {"output": {"hookSpecificOutput": output}}}


def test_headless_refuses_touch_without_a_hook_decision(
    dirs: tuple[Path, Path], hooked: Hooked
) -> None:
    home, project = dirs
    hook = hooked(project, {})
    with FakeAnthropic([TOUCH, Text("All done.")]) as api:
        run = run_print("make the file", project, home, api.url)

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "All done."
    (result,) = api.tool_results()
    assert result.is_error and "was blocked" in result.content
    assert not (project / "ran.txt").exists()
    assert hook.events() == ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"]
    (pre,) = hook.calls("PreToolUse")
    assert pre["stdin"]["tool_input"] == TOUCH.input
    assert pre["stdin"]["permission_mode"] == "default"
    assert pre["env"]["CLAUDE_CODE_ENTRYPOINT"] == "sdk-cli"
    assert pre["env"]["CLAUDE_PROJECT_DIR"] == str(project) == pre["cwd"]


def test_headless_deny_reason_reaches_the_model(dirs: tuple[Path, Path], hooked: Hooked) -> None:
    home, project = dirs
    hooked(project, pre_tool_use("deny", "Denied from the phone: not today"))
    with FakeAnthropic([TOUCH, Text("All done.")]) as api:
        run = run_print("make the file", project, home, api.url)

    assert run.returncode == 0, run.stderr
    (result,) = api.tool_results()
    assert (result.content, result.is_error) == ("Denied from the phone: not today", True)
    assert not (project / "ran.txt").exists()


def test_headless_allow_runs_what_would_be_refused(dirs: tuple[Path, Path], hooked: Hooked) -> None:
    home, project = dirs
    hook = hooked(project, pre_tool_use("allow", "approved"))
    with FakeAnthropic([TOUCH, Text("All done.")]) as api:
        run = run_print("make the file", project, home, api.url)

    assert run.returncode == 0, run.stderr
    assert (project / "ran.txt").exists()
    (result,) = api.tool_results()
    assert not result.is_error
    (post,) = hook.calls("PostToolUse")
    assert post["stdin"]["tool_use_id"] == result.tool_use_id


def test_headless_updated_input_runs_the_edited_command(
    dirs: tuple[Path, Path], hooked: Hooked
) -> None:
    home, project = dirs
    edited = {"command": "touch edited.txt", "description": "Create edited.txt"}
    hook = hooked(project, pre_tool_use("allow", "edited", updatedInput=edited))
    with FakeAnthropic([TOUCH, Text("All done.")]) as api:
        run_print("make the file", project, home, api.url)

    assert (project / "edited.txt").exists() and not (project / "ran.txt").exists()
    (post,) = hook.calls("PostToolUse")
    assert post["stdin"]["tool_input"] == edited


def test_terminal_permission_request_allow_closes_the_dialog(
    dirs: tuple[Path, Path], hooked: Hooked
) -> None:
    home, project = dirs
    hook = hooked(project, permission_request("allow"))
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        screen = terminal.wait_for("All done.")

        assert "Allowed by PermissionRequest hook" in screen
        assert (project / "ran.txt").exists()
        (request,) = hook.calls("PermissionRequest")
        assert request["stdin"]["tool_input"] == TOUCH.input
        assert "tool_use_id" not in request["stdin"]
        assert request["stdin"]["permission_suggestions"]
        assert request["env"]["CLAUDE_CODE_ENTRYPOINT"] == "cli"


def test_terminal_deny_message_reaches_the_model(dirs: tuple[Path, Path], hooked: Hooked) -> None:
    home, project = dirs
    hooked(project, permission_request("deny", message="Denied from the phone"))
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        terminal.wait_for("All done.")

        (result,) = api.tool_results()
        assert (result.content, result.is_error) == ("Denied from the phone", True)
        assert not (project / "ran.txt").exists()


def test_terminal_person_answers_the_dialog(dirs: tuple[Path, Path], hooked: Hooked) -> None:
    home, project = dirs
    hook = hooked(project, {})  # the hook answers nothing: the person decides
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        screen = terminal.wait_for_permission_dialog()
        assert "touch ran.txt" in screen
        terminal.allow()
        terminal.wait_for("All done.")

        assert (project / "ran.txt").exists()
        (post,) = hook.calls("PostToolUse")
        assert post["stdin"]["tool_input"] == TOUCH.input


def test_terminal_person_denies_the_dialog(dirs: tuple[Path, Path], hooked: Hooked) -> None:
    """A "No" typed in the terminal ends the turn silently: the model is not asked again and
    no hook event reports it, which is why the hub cannot learn of it until the next one."""
    home, project = dirs
    hook = hooked(project, {})
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        terminal.wait_for_permission_dialog()
        terminal.deny()
        screen = terminal.wait_for("? for shortcuts")

        assert "Interrupted" in screen
        assert not (project / "ran.txt").exists()
        assert len(api.model_calls()) == 1
        assert hook.events()[-2:] == ["PreToolUse", "PermissionRequest"]


def test_terminal_answer_first_leaves_the_hook_running(
    dirs: tuple[Path, Path], hooked: Hooked
) -> None:
    """What the hub's hook client has to cope with: once the person answers in the terminal,
    Claude Code stops waiting for the PermissionRequest hook but neither signals it nor
    closes its stdout, and PostToolUse reports the call that ran."""
    home, project = dirs
    hook = hooked(project, {"PermissionRequest": {"sleep": 30}})
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        terminal.wait_for_permission_dialog()
        terminal.wait_for(lambda _: bool(hook.running("PermissionRequest")))
        terminal.allow()
        terminal.wait_for("All done.")

        assert (project / "ran.txt").exists()
        (post,) = hook.calls("PostToolUse")
        assert post["stdin"]["tool_input"] == TOUCH.input
        (request,) = hook.calls("PermissionRequest")
        assert hook.running("PermissionRequest") and request["signals"] == []


def test_terminal_allow_with_a_local_rule_writes_local_settings(
    dirs: tuple[Path, Path], hooked: Hooked
) -> None:
    home, project = dirs
    rule = {"toolName": "Bash", "ruleContent": "touch:*"}
    always = {"type": "addRules", "rules": [rule], "behavior": "allow"}
    hooked(
        project,
        permission_request(
            "allow", updatedPermissions=[{**always, "destination": "localSettings"}]
        ),
    )
    with (
        FakeAnthropic([TOUCH, Text("All done.")]) as api,
        terminal_ui(project, home, api.url) as terminal,
    ):
        terminal.type_line("make the file")
        terminal.wait_for("All done.")

    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local == {"permissions": {"allow": ["Bash(touch:*)"]}}
