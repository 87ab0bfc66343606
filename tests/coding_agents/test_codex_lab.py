"""The real Codex CLI against the fake model API, gated by a hook installed the hub's way.

The hook here is a small script written by the test, named ``lineup-hook`` so that
``codex_home.install`` takes it for ours; it logs what Codex sends it and answers the
PermissionRequest with a fixed decision. The model asks to run ``touch ran.txt`` outside the
sandbox, which is what Codex must ask about.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hub.coding_agents import codex_home
from tests.coding_agents import codex_cli
from tests.coding_agents.fake_openai import ExecCommand, FakeResponses

pytestmark = [pytest.mark.timeout(90), pytest.mark.same_on_every_database]

DECLINE = "Declined from the phone."

HOOK = """\
#!{python}
import json, sys, time
event = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(event) + "\\n")
decision = {decision!r}
if event["hook_event_name"] == "PermissionRequest" and decision:
    time.sleep({delay})
    print(json.dumps({{"hookSpecificOutput": {{
        "hookEventName": "PermissionRequest", "decision": decision}}}}))
"""


@pytest.fixture(autouse=True)
def _codex_present():
    codex_cli.require_codex()


def write_hook(tmp_path: Path, decision: dict | None, delay: float = 0) -> tuple[str, Path]:
    log = tmp_path / "hook-events.jsonl"
    script = tmp_path / "bin" / "lineup-hook"
    script.parent.mkdir()
    script.write_text(
        HOOK.format(python=sys.executable, log=str(log), decision=decision, delay=delay)
    )
    script.chmod(0o755)
    return f"{script} codex --wait 10", log


def logged_events(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["hook_event_name"] for line in log.read_text().splitlines()]


def lab(tmp_path: Path, fake: FakeResponses) -> tuple[Path, Path]:
    home = codex_cli.codex_home(tmp_path / "codex-home", fake.url)
    work = tmp_path / "work"
    work.mkdir()
    return home, work


def test_a_permission_request_hook_that_allows_lets_the_command_run(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "allow"})
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        codex_cli.run_exec("make the file", work, home)

    assert (work / "ran.txt").exists()
    assert "PermissionRequest" in logged_events(log)
    assert fake.reviewer_requests == []  # the hook decided; Codex's reviewer was not asked


def test_a_permission_request_hook_that_denies_stops_it_and_tells_the_model(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "deny", "message": DECLINE})
    with FakeResponses([ExecCommand("touch ran.txt")], reviewer_outcome="allow") as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        codex_cli.run_exec("make the file", work, home)

    assert not (work / "ran.txt").exists()
    [(call_id, output)] = fake.function_outputs()
    assert call_id == "call_1"
    assert DECLINE in output
    assert fake.reviewer_requests == []
    assert "PostToolUse" not in logged_events(log)


def test_the_same_hook_without_trust_is_skipped(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "allow"})
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        untrusted_config = (home / "config.toml").read_text()
        codex_home.install(home, command, 30)
        # The same hooks.json, without the trust entries install wrote.
        (home / "config.toml").write_text(untrusted_config)

        codex_cli.run_exec("make the file", work, home)

    assert logged_events(log) == []
    # With no hook deciding, Codex's reviewer was asked, and the fake's reviewer denies.
    assert len(fake.reviewer_requests) == 1
    assert not (work / "ran.txt").exists()


def test_a_hook_past_its_timeout_is_cut_off_and_codex_asks_its_reviewer(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "allow"}, delay=20)
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 1)

        result = codex_cli.run_exec("make the file", work, home)

    # Codex reports its hooks' progress on stderr; stdout has only the final answer.
    assert "hook: PermissionRequest Failed" in result.stderr
    assert "PermissionRequest" in logged_events(log)
    assert len(fake.reviewer_requests) == 1  # and the fake's reviewer denies
    assert not (work / "ran.txt").exists()


def test_codex_reports_the_installed_hooks_trusted_with_the_hash_install_computed(tmp_path):
    command, _ = write_hook(tmp_path, None)
    with FakeResponses([]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        with codex_cli.AppServer(home, work) as server:
            hooks = server.hooks()

    listed = {hook["key"]: hook for hook in hooks}
    assert len(listed) == len(codex_home.EVENTS)
    for event in codex_home.EVENTS:
        hook = listed[codex_home.hook_key(home / "hooks.json", event, 0, 0)]
        assert hook["trustStatus"] == "trusted"
        timeout = codex_home.installed_timeout(event, 30)
        assert hook["currentHash"] == codex_home.trust_hash(event, command, timeout)


def approvals_until_turn_ends(server: codex_cli.AppServer, decision: str) -> list[dict]:
    asked = []
    while True:
        message = server.next_message(timeout=60)
        if message.get("method") == "item/commandExecution/requestApproval":
            asked.append(message)
            server.respond(message, {"decision": decision})
        if message.get("method") == "turn/completed":
            return asked


def test_in_the_app_server_a_deciding_hook_means_the_client_is_not_asked(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "allow"})
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        with codex_cli.AppServer(home, work) as server:
            server.start_turn(
                "make the file", approvalPolicy="on-request", sandbox="workspace-write"
            )
            asked = approvals_until_turn_ends(server, "decline")

    assert asked == []
    assert (work / "ran.txt").exists()
    assert "PermissionRequest" in logged_events(log)


def test_in_the_app_server_a_silent_hook_hands_the_question_to_the_client(tmp_path):
    command, log = write_hook(tmp_path, None)
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        with codex_cli.AppServer(home, work) as server:
            server.start_turn(
                "make the file", approvalPolicy="on-request", sandbox="workspace-write"
            )
            asked = approvals_until_turn_ends(server, "decline")

    assert "PermissionRequest" in logged_events(log)
    [approval] = asked
    assert approval["params"]["command"].endswith("touch ran.txt'")
    assert not (work / "ran.txt").exists()


TUI_ARGS = ("--no-daemon", "-a", "on-request", "-s", "workspace-write")
DIALOG = "Would you like to run the following command?"


def screens_until_done(tui: codex_cli.Tui) -> list[str]:
    screens = [tui.wait_for("Ask Codex")]
    tui.submit("make the file")
    screens.append(tui.wait_for("Worked for", timeout=60))
    return screens


def test_in_the_terminal_ui_a_deciding_hook_means_no_dialog(tmp_path):
    command, log = write_hook(tmp_path, {"behavior": "allow"})
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        with codex_cli.Tui(home, work, *TUI_ARGS) as tui:
            screens = screens_until_done(tui)

    assert (work / "ran.txt").exists()
    assert "PermissionRequest" in logged_events(log)
    assert not any(DIALOG in screen for screen in screens)


def test_in_the_terminal_ui_a_silent_hook_leaves_the_question_to_the_dialog(tmp_path):
    command, log = write_hook(tmp_path, None)
    with FakeResponses([ExecCommand("touch ran.txt")]) as fake:
        home, work = lab(tmp_path, fake)
        codex_home.install(home, command, 30)

        with codex_cli.Tui(home, work, *TUI_ARGS) as tui:
            tui.wait_for("Ask Codex")
            tui.submit("make the file")
            tui.wait_for(DIALOG)
            assert "PermissionRequest" in logged_events(log)
            tui.keys("y")
            tui.wait_for("Worked for")

    assert (work / "ran.txt").exists()


def test_without_hooks_codex_asks_its_reviewer_and_the_fake_answers_it_aside(tmp_path):
    script = [ExecCommand("touch ran.txt")]
    with FakeResponses(script, reviewer_outcome="allow") as fake:
        home, work = lab(tmp_path, fake)

        codex_cli.run_exec("make the file", work, home)

    assert (work / "ran.txt").exists()
    [review] = fake.reviewer_requests
    assert "touch ran.txt" in json.dumps(review["input"])
    # The review took no turn: the model saw the command's output on its second call.
    assert len(fake.requests) == 2
