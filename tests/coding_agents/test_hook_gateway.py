"""The hook gateway end to end: ``lineup connect``, then the real ``lineup-hook`` command
fed the events Claude Code and Codex give it, against a real hub process.

The CLIs themselves drive the same path in ``test_claude_code.py`` and ``test_codex.py``;
here each case of the gateway is taken on its own, with events written as the CLIs write
them.
"""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from hub.protocol.actions import action_hash
from hub.testing import eventually
from tests.coding_agents.hub_side import Machine, connected_machine, finished

pytestmark = pytest.mark.timeout(150)

HEADLESS = {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
TERMINAL = {"CLAUDE_CODE_ENTRYPOINT": "cli"}


@pytest.fixture
async def machine(db: str, tmp_path: Path) -> Any:
    async with connected_machine(db, tmp_path) as machine:
        yield machine


def bash(machine: Machine, command: str, event: str = "PermissionRequest", **more: Any) -> dict:
    return machine.event(
        event,
        tool_name="Bash",
        tool_input={"command": command, "description": "Tidy the build folder"},
        **more,
    )


async def answer(machine: Machine, card: dict[str, Any], option: str, **body: Any) -> None:
    action = card["card"]["action"]
    await machine.hub.api(
        "POST",
        f"/interactions/{card['id']}/respond",
        {"optionId": option, "actionHash": action_hash(action["kind"], action["fields"]), **body},
    )


async def session_task(machine: Machine) -> dict[str, Any]:
    tasks = (await machine.hub.api("GET", "/tasks"))["tasks"]
    (task,) = [t for t in tasks if t["targetAgentId"] == machine.agent_id]
    return dict(await machine.hub.api("GET", f"/tasks/{task['id']}"))


async def test_connect_keeps_the_credential_private_and_is_idempotent(machine: Machine) -> None:
    stored = machine.home / ".config/lineup/coding-agents/claude-code.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    settings = machine.project / ".claude" / "settings.json"
    first = settings.read_text()
    hooks = json.loads(first)["hooks"]
    assert {"PermissionRequest", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} <= set(hooks)
    again = machine.lineup("connect", "claude-code", "--hub", machine.hub.url)
    assert "already in" in again.stdout
    assert settings.read_text() == first
    gone = machine.lineup("disconnect", "claude-code")
    assert "removed from" in gone.stdout
    assert "lineup-hook" not in settings.read_text()


async def test_a_session_is_a_task_with_its_prompts_tools_and_last_message(
    machine: Machine,
) -> None:
    await machine.hook(machine.event("SessionStart", source="startup"))
    await machine.hook(machine.event("UserPromptSubmit", prompt="Clean the build folder"))
    ran = machine.event(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "ls build"},
        tool_response={"stdout": "a.o"},
        tool_use_id="toolu_1",
    )
    await machine.hook(ran)
    await machine.hook(machine.event("Stop", last_assistant_message="The folder is clean."))
    before_end = await session_task(machine)
    assert before_end["title"] == "shop — Claude Code"
    assert before_end["status"] == "running"
    assert before_end["summary"] == "Ran Bash: ls build"
    texts = [m["content"] for m in before_end["messages"]]
    assert texts == ["Prompt: Clean the build folder", "The folder is clean."]
    await machine.hook(machine.event("SessionEnd", reason="prompt_input_exit"))
    ended = await session_task(machine)
    assert ended["status"] == "succeeded"


async def test_approved_in_the_hub_the_terminal_dialog_gets_allow(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "rm -rf build"), **TERMINAL)
    card = await machine.pending_card("rm -rf build")
    assert card["card"]["risk"] == "high"
    assert card["card"]["action"]["fields"]["command"] == "rm -rf build"
    assert card["card"]["action"]["editable"] == ["command"]
    assert (await session_task(machine))["status"] == "waiting_for_human"
    await answer(machine, card, "approve")
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision == {"behavior": "allow"}


async def test_an_edit_in_the_hub_comes_back_as_updated_input(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "rm -rf build"), **TERMINAL)
    card = await machine.pending_card("rm -rf")
    await answer(machine, card, "approve", action={"command": "rm -rf build/tmp"})
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"] == {
        "command": "rm -rf build/tmp",
        "description": "Tidy the build folder",
    }


async def test_a_denial_with_a_comment_reaches_the_model(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "git push --force"), **TERMINAL)
    card = await machine.pending_card("git push")
    await answer(machine, card, "deny", comment="Open a pull request instead.")
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision["behavior"] == "deny"
    assert "Open a pull request instead." in decision["message"]


async def test_always_allow_returns_claude_codes_own_suggestion(machine: Machine) -> None:
    suggestion = {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
        "behavior": "allow",
        "destination": "localSettings",
    }
    event = bash(machine, "npm test", permission_suggestions=[suggestion])
    waiting = await machine.start_hook(event, **TERMINAL)
    card = await machine.pending_card("npm test")
    options = [o["id"] for o in card["card"]["options"]]
    assert options == ["approve", "always", "deny"]
    assert "Bash(npm test:*)" in card["card"]["options"][1]["description"]
    await answer(machine, card, "always")
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision == {"behavior": "allow", "updatedPermissions": [suggestion]}


async def test_headless_pre_tool_use_gates_what_would_be_refused(machine: Machine) -> None:
    # Reading is never asked about: no card, no answer, the CLI goes on.
    read = machine.event(
        "PreToolUse", tool_name="Read", tool_input={"file_path": "README"}, tool_use_id="t1"
    )
    quiet = await machine.hook(read, **HEADLESS)
    assert quiet.output is None
    write = bash(machine, "touch built.txt", event="PreToolUse", tool_use_id="t2")
    waiting = await machine.start_hook(write, **HEADLESS)
    card = await machine.pending_card("touch built.txt")
    await answer(machine, card, "approve")
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]  # type: ignore[index]
    assert decision["permissionDecision"] == "allow"
    # In the terminal UI PreToolUse says nothing: PermissionRequest asks there.
    assert (await machine.hook(write, **TERMINAL)).output is None


async def test_an_unanswered_card_expires_and_denies(machine: Machine) -> None:
    run = await machine.hook(bash(machine, "make deploy"), wait=2, **TERMINAL)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision["behavior"] == "deny"
    assert "expired" in decision["message"]
    task = await session_task(machine)
    (card,) = task["interactions"]
    assert card["status"] == "expired"
    assert card["respondedBy"] is None  # nobody denied it: the time ran out


async def test_with_the_hub_down_nothing_is_allowed(machine: Machine) -> None:
    await asyncio.to_thread(machine.hub.process.stop)
    terminal = await machine.hook(bash(machine, "make deploy"), **TERMINAL)
    assert terminal.output is None  # left to Claude Code's own dialog
    assert "did not answer" in terminal.stderr
    headless = await machine.hook(
        bash(machine, "make deploy", event="PreToolUse", tool_use_id="t3"), **HEADLESS
    )
    decision = headless.output["hookSpecificOutput"]  # type: ignore[index]
    assert decision["permissionDecision"] == "deny"
    assert "did not answer" in decision["permissionDecisionReason"]
    codex = await machine.hook(bash(machine, "make deploy"), cli="codex")
    assert codex.output["hookSpecificOutput"]["decision"]["behavior"] == "deny"  # type: ignore[index]


async def test_a_hook_stopped_by_a_terminal_answer_withdraws_its_card(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "make deploy"), **TERMINAL)
    card = await machine.pending_card("make deploy")
    waiting.terminate()  # what Claude Code does once the person answers its dialog
    await waiting.wait()

    async def withdrawn() -> dict[str, Any] | None:
        now = await machine.hub.api("GET", f"/interactions/{card['id']}")
        return now if now["status"] == "cancelled" else None

    closed = await eventually(withdrawn, within=30)
    assert closed["withdrawal"]["reason"] == "answered_in_terminal"


async def test_a_card_waits_through_a_hub_restart(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "make deploy"), **TERMINAL)
    card = await machine.pending_card("make deploy")
    await asyncio.to_thread(machine.hub.process.stop)
    await asyncio.to_thread(machine.hub.process.start)
    await answer(machine, card, "approve")
    run = await finished(waiting)
    assert run.output["hookSpecificOutput"]["decision"] == {"behavior": "allow"}  # type: ignore[index]
    task = await session_task(machine)
    assert len(task["interactions"]) == 1  # the same card, not a second one


async def test_a_session_resumed_after_it_ended_is_its_next_task(machine: Machine) -> None:
    await machine.hook(machine.event("SessionStart", source="startup"))
    await machine.hook(machine.event("SessionEnd", reason="prompt_input_exit"))
    # The hub restarts meanwhile: what the session's runs are is read from the tasks.
    await asyncio.to_thread(machine.hub.process.stop)
    await asyncio.to_thread(machine.hub.process.start)
    await machine.hook(machine.event("SessionStart", source="resume"))
    waiting = await machine.start_hook(bash(machine, "make deploy"), **TERMINAL)
    card = await machine.pending_card("make deploy")
    await answer(machine, card, "approve")
    run = await finished(waiting)
    assert run.output["hookSpecificOutput"]["decision"] == {"behavior": "allow"}  # type: ignore[index]
    tasks = (await machine.hub.api("GET", "/tasks"))["tasks"]
    ours = sorted(
        (t["status"], t["title"]) for t in tasks if t["targetAgentId"] == machine.agent_id
    )
    assert ours == [("running", "shop — Claude Code"), ("succeeded", "shop — Claude Code")]
    # A compaction inside the running session is not a new task.
    await machine.hook(machine.event("SessionStart", source="compact"))
    tasks = (await machine.hub.api("GET", "/tasks"))["tasks"]
    assert len([t for t in tasks if t["targetAgentId"] == machine.agent_id]) == 2


async def test_codex_cards_say_they_take_no_edits(db: str, tmp_path: Path) -> None:
    async with connected_machine(db, tmp_path, cli="codex") as codex:
        event = codex.event(
            "PermissionRequest",
            tool_name="Bash",
            tool_input={"command": "touch ran.txt", "description": "needs a file"},
            model="gpt-5",
            turn_id="turn-1",
        )
        waiting = await codex.start_hook(event, cli="codex")
        card = await codex.pending_card("touch ran.txt")
        assert card["card"]["title"].startswith("Codex wants to run")
        assert card["card"]["action"]["editable"] == []
        assert "does not take edits" in card["card"]["impact"]
        await answer(codex, card, "deny", comment="Not now.")
        run = await finished(waiting)
        decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
        assert decision["behavior"] == "deny"
        assert "Not now." in decision["message"]


async def test_cancelling_the_session_task_denies_what_it_asks(machine: Machine) -> None:
    waiting = await machine.start_hook(bash(machine, "make deploy"), **TERMINAL)
    card = await machine.pending_card("make deploy")
    await machine.hub.api("POST", f"/tasks/{card['taskId']}/cancel", {"reason": "Stop."})
    run = await finished(waiting)
    decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert decision["behavior"] == "deny"
    assert "cancelled this session's task" in decision["message"]
    later = await machine.hook(bash(machine, "make deploy-again"), **TERMINAL)
    again = later.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert again["behavior"] == "deny"
    assert "cancelled this session's task" in again["message"]


# --- the workspace's deny rules -----------------------------------------------------------

NEVER = ["Bash(git push --force:*)", "Edit(//etc/**)"]


async def test_a_workspace_rule_refuses_a_call_before_anyone_is_asked(machine: Machine) -> None:
    await machine.hub.api("PUT", "/coding-agent-rules", {"deny": NEVER})
    # In the terminal UI, PreToolUse is only checked: refused here, Claude Code never asks.
    line = "git status && git push --force origin main"
    refused = await machine.hook(bash(machine, line, "PreToolUse", tool_use_id="t1"), **TERMINAL)
    decision = refused.output["hookSpecificOutput"]  # type: ignore[index]
    assert decision["permissionDecision"] == "deny"
    assert "rule Bash(git push --force:*)" in decision["permissionDecisionReason"]
    # A call no rule names goes on with nothing said, and nothing asked.
    fine = await machine.hook(bash(machine, "git push origin main", "PreToolUse"), **TERMINAL)
    assert fine.output is None
    assert fine.stderr == ""
    # Headless, a call that would be asked about is refused by the rule, with no card.
    write = machine.event(
        "PreToolUse", tool_name="Write", tool_input={"file_path": "/etc/hosts", "content": "x"}
    )
    headless = await machine.hook(write, **HEADLESS)
    assert headless.output["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]
    # And so is a PermissionRequest the terminal's dialog would show.
    asked = await machine.hook(bash(machine, "git push --force origin dev"), **TERMINAL)
    assert asked.output["hookSpecificOutput"]["decision"]["behavior"] == "deny"  # type: ignore[index]
    assert (await machine.hub.api("GET", "/inbox"))["waitingForMe"] == []
    task = await session_task(machine)
    assert task["summary"] == (
        "Refused by the workspace rule Bash(git push --force:*): Bash: git push --force origin dev"
    )


async def test_codex_pre_tool_use_applies_the_rules_and_nothing_else(
    db: str, tmp_path: Path
) -> None:
    async with connected_machine(db, tmp_path, cli="codex") as codex:
        await codex.hub.api("PUT", "/coding-agent-rules", {"deny": ["Bash(terraform apply:*)"]})

        def pre(command: str, call: str) -> dict[str, Any]:
            return codex.event(
                "PreToolUse", tool_name="Bash", tool_input={"command": command}, tool_use_id=call
            )

        refused = await codex.hook(pre("terraform apply -auto-approve", "call_1"), cli="codex")
        decision = refused.output["hookSpecificOutput"]  # type: ignore[index]
        assert decision["hookEventName"] == "PreToolUse"
        assert decision["permissionDecision"] == "deny"
        assert "terraform apply" in decision["permissionDecisionReason"]
        # Anything else is Codex's to ask about (PermissionRequest): nothing said here.
        other = await codex.hook(pre("touch ran.txt", "call_2"), cli="codex")
        assert other.output is None
        assert (await codex.hub.api("GET", "/inbox"))["waitingForMe"] == []
        # The hub down: the check is skipped with a line on stderr, and Codex asks as usual
        # (its PermissionRequest then finds the hub down, and denies).
        await asyncio.to_thread(codex.hub.process.stop)
        down = await codex.hook(pre("terraform apply", "call_3"), cli="codex")
        assert down.output is None
        assert "not checked against the workspace's rules" in down.stderr


async def test_the_rules_are_the_owners_to_change_and_a_bad_one_changes_nothing(
    machine: Machine,
) -> None:
    kept = await machine.hub.api("PUT", "/coding-agent-rules", {"deny": [*NEVER, "", NEVER[0]]})
    assert kept == {"deny": NEVER}
    for bad, code in (("Edit(~/.ssh/**)", "invalid_rule"), ("(oops", "invalid_rule")):
        with pytest.raises(AssertionError, match=f"422.*{code}"):
            await machine.hub.api("PUT", "/coding-agent-rules", {"deny": [NEVER[0], bad]})
    with pytest.raises(AssertionError, match=r"422.*too_many_rules"):
        many = [f"Bash(deploy-{n}:*)" for n in range(201)]
        await machine.hub.api("PUT", "/coding-agent-rules", {"deny": many})
    assert await machine.hub.api("GET", "/coding-agent-rules") == {"deny": NEVER}
