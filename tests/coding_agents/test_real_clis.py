"""The real Claude Code and Codex CLIs, gated through a real hub by ``lineup connect``.

Each CLI runs as a person runs it, against a fake model API (the only stand-in): the
model asks for commands, the hooks ``lineup connect`` wrote ask the hub, and a person
answers the cards through the JSON API while the CLI waits. What each command did is read
from the disk, and what the model was told from the fake API's requests.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hub.testing import eventually
from tests.coding_agents import claude_cli, codex_cli
from tests.coding_agents.fake_anthropic import FakeAnthropic, Text, ToolUse
from tests.coding_agents.fake_openai import ExecCommand, FakeResponses
from tests.coding_agents.fake_openai import Text as CodexText
from tests.coding_agents.hub_side import Machine, connected_machine
from tests.coding_agents.test_codex_lab import DIALOG, TUI_ARGS, approvals_until_turn_ends
from tests.coding_agents.test_hook_gateway import answer, session_task

pytestmark = [pytest.mark.timeout(180), pytest.mark.same_on_every_database]


def touch(name: str) -> ToolUse:
    return ToolUse("Bash", {"command": f"touch {name}", "description": f"Make {name}"})


def machine_env(machine: Machine) -> dict[str, str]:
    """What the hooks need to find the connection (the CLI's HOME is the machine's)."""
    return {"LINEUP_AGENT_HOME": machine.env["LINEUP_AGENT_HOME"]}


async def answered_in_order(machine: Machine, answers: list[tuple[str, dict[str, Any]]]) -> None:
    """Answer each card as it comes, in order: ``(option, extra body)``."""
    for number, (option, body) in enumerate(answers, start=1):

        async def nth_card(n: int = number) -> dict[str, Any] | None:
            task = await session_task_or_none(machine)
            cards = task["interactions"] if task else []
            return dict(cards[n - 1]) if len(cards) >= n else None

        card = await eventually(nth_card, within=60)
        await answer(machine, card, option, **body)


async def session_task_or_none(machine: Machine) -> dict[str, Any] | None:
    tasks = (await machine.hub.api("GET", "/tasks"))["tasks"]
    if not any(t["targetAgentId"] == machine.agent_id for t in tasks):
        return None
    return await session_task(machine)


@pytest.fixture
async def claude(db: str, tmp_path: Path) -> Any:
    claude_cli.claude_binary()  # a clear skip before a hub is started for nothing
    async with connected_machine(db, tmp_path) as machine:
        yield machine


async def test_claude_p_runs_what_the_hub_approves_and_edits_and_not_what_it_denies(
    claude: Machine,
) -> None:
    script = [touch("approved.txt"), touch("denied.txt"), touch("proposed.txt"), Text("Done.")]
    with FakeAnthropic(script) as model:
        run = asyncio.create_task(
            asyncio.to_thread(
                claude_cli.run_print,
                "Make the three files",
                claude.project,
                claude.home,
                model.url,
                timeout=150,
                extra_env=machine_env(claude),
            )
        )
        await answered_in_order(
            claude,
            [
                ("approve", {}),
                ("deny", {"comment": "Use the staging folder."}),
                ("approve", {"action": {"command": "touch edited.txt"}}),
            ],
        )
        done = await run
        results = model.tool_results()
    assert done.returncode == 0, done.stderr
    assert (claude.project / "approved.txt").exists()
    assert not (claude.project / "denied.txt").exists()
    assert (claude.project / "edited.txt").exists()
    assert not (claude.project / "proposed.txt").exists()
    denial = results[1]
    assert denial.is_error and "Use the staging folder." in denial.content
    task = await session_task(claude)
    assert task["status"] == "succeeded"  # the session ended
    assert [m["content"] for m in task["messages"]] == ["Prompt: Make the three files", "Done."]
    assert [c["status"] for c in task["interactions"]] == ["resolved"] * 3


async def test_claude_p_with_nobody_answering_is_denied_as_expired(db: str, tmp_path: Path) -> None:
    claude_cli.claude_binary()
    async with connected_machine(db, tmp_path) as machine:
        machine.lineup("connect", "claude-code", "--hub", machine.hub.url, "--wait", "3")
        with FakeAnthropic([touch("late.txt"), Text("Done.")]) as model:
            await asyncio.to_thread(
                claude_cli.run_print,
                "Make the file",
                machine.project,
                machine.home,
                model.url,
                extra_env=machine_env(machine),
            )
            results = model.tool_results()
        assert not (machine.project / "late.txt").exists()
        assert "card expired" in results[0].content
        task = await session_task(machine)
        assert task["interactions"][0]["status"] == "expired"


async def test_claude_p_with_the_hub_down_allows_nothing(claude: Machine) -> None:
    await asyncio.to_thread(claude.hub.process.stop)
    with FakeAnthropic([touch("offline.txt"), Text("Done.")]) as model:
        await asyncio.to_thread(
            claude_cli.run_print,
            "Make the file",
            claude.project,
            claude.home,
            model.url,
            extra_env=machine_env(claude),
        )
        results = model.tool_results()
    assert not (claude.project / "offline.txt").exists()
    assert "did not answer" in results[0].content


async def test_claude_terminal_ui_takes_the_hubs_answer(claude: Machine) -> None:
    with (
        FakeAnthropic([touch("from-the-phone.txt"), Text("Done.")]) as model,
        claude_cli.terminal_ui(
            claude.project, claude.home, model.url, extra_env=machine_env(claude)
        ) as terminal,
    ):
        terminal.type_line("Make the file")
        await asyncio.to_thread(terminal.wait_for_permission_dialog)
        card = await claude.pending_card("from-the-phone.txt")
        await answer(claude, card, "approve")
        await eventually(lambda: (claude.project / "from-the-phone.txt").exists(), within=30)
        screen = await asyncio.to_thread(terminal.wait_for, "Allowed by PermissionRequest hook")
        assert "Do you want to proceed" not in screen.split("Allowed by")[-1]


async def test_claude_terminal_answered_first_closes_the_card(claude: Machine) -> None:
    with (
        FakeAnthropic([touch("at-the-desk.txt"), Text("Done.")]) as model,
        claude_cli.terminal_ui(
            claude.project, claude.home, model.url, extra_env=machine_env(claude)
        ) as terminal,
    ):
        terminal.type_line("Make the file")
        await asyncio.to_thread(terminal.wait_for_permission_dialog)
        card = await claude.pending_card("at-the-desk.txt")
        terminal.allow()

        async def withdrawn() -> dict[str, Any] | None:
            now = await claude.hub.api("GET", f"/interactions/{card['id']}")
            return now if now["status"] == "cancelled" else None

        closed = await eventually(withdrawn, within=30)
        assert closed["withdrawal"]["reason"] == "answered_in_terminal"
        assert (claude.project / "at-the-desk.txt").exists()


async def test_codex_exec_runs_what_the_hub_approves_and_tells_the_model_a_denial(
    db: str, tmp_path: Path
) -> None:
    codex_cli.require_codex()
    async with connected_machine(db, tmp_path, cli="codex") as machine:
        script = [
            ExecCommand("touch approved.txt"),
            ExecCommand("touch denied.txt"),
            CodexText("Done."),
        ]
        with FakeResponses(script) as model:
            home = codex_cli.codex_home(machine.home / ".codex", model.url)
            # Writing the model's config dropped the trust entries: connecting again puts
            # them back, beside it.
            machine.lineup("connect", "codex", "--hub", machine.hub.url)
            run = asyncio.create_task(
                asyncio.to_thread(
                    codex_cli.run_exec,
                    "Make the files",
                    machine.project,
                    home,
                    timeout=150,
                    extra_env=machine_env(machine),
                )
            )
            await answered_in_order(
                machine, [("approve", {}), ("deny", {"comment": "Not on a Friday."})]
            )
            done = await run
            outputs = [text for _, text in model.function_outputs()]
            reviewed = len(model.reviewer_requests)
        assert done.returncode == 0, done.stderr
        assert (machine.project / "approved.txt").exists()
        assert not (machine.project / "denied.txt").exists()
        assert any("Not on a Friday." in text for text in outputs)
        assert reviewed == 0  # the hub decided; Codex's own reviewer was never asked
        task = await session_task(machine)
        assert task["title"] == "shop — Codex"
        assert task["status"] == "succeeded"


async def test_codex_exec_is_refused_what_a_workspace_rule_forbids_with_no_one_asked(
    db: str, tmp_path: Path
) -> None:
    codex_cli.require_codex()
    async with connected_machine(db, tmp_path, cli="codex") as machine:
        await machine.hub.api("PUT", "/coding-agent-rules", {"deny": ["Bash(touch forbidden.txt)"]})
        script = [ExecCommand("touch forbidden.txt"), CodexText("Done.")]
        with FakeResponses(script) as model:
            home = codex_cli.codex_home(machine.home / ".codex", model.url)
            machine.lineup("connect", "codex", "--hub", machine.hub.url)
            done = await asyncio.to_thread(
                codex_cli.run_exec,
                "Make the file",
                machine.project,
                home,
                timeout=150,
                extra_env=machine_env(machine),
            )
            outputs = [text for _, text in model.function_outputs()]
            reviewed = len(model.reviewer_requests)
        assert done.returncode == 0, done.stderr
        assert not (machine.project / "forbidden.txt").exists()
        assert any("Bash(touch forbidden.txt)" in text for text in outputs)
        assert reviewed == 0
        task = await session_task(machine)
        assert task["interactions"] == []  # refused by the rule: no one was asked
        assert "Refused by the workspace rule Bash(touch forbidden.txt)" in str(task["timeline"])


async def test_codex_app_server_takes_the_hubs_answer_and_never_asks_its_client(
    db: str, tmp_path: Path
) -> None:
    codex_cli.require_codex()
    async with connected_machine(db, tmp_path, cli="codex") as machine:
        with FakeResponses([ExecCommand("touch from-the-phone.txt"), CodexText("Done.")]) as model:
            home = codex_cli.codex_home(machine.home / ".codex", model.url)
            machine.lineup("connect", "codex", "--hub", machine.hub.url)
            with codex_cli.AppServer(home, machine.project, machine_env(machine)) as server:
                server.start_turn(
                    "Make the file", approvalPolicy="on-request", sandbox="workspace-write"
                )
                asking = asyncio.create_task(
                    asyncio.to_thread(approvals_until_turn_ends, server, "decline")
                )
                await answered_in_order(machine, [("approve", {})])
                asked = await asking
        assert asked == []  # the hub decided: the app-server's client was never asked
        assert (machine.project / "from-the-phone.txt").exists()


async def test_codex_terminal_ui_takes_the_hubs_answer(db: str, tmp_path: Path) -> None:
    codex_cli.require_codex()
    async with connected_machine(db, tmp_path, cli="codex") as machine:
        with FakeResponses([ExecCommand("touch from-the-phone.txt"), CodexText("Done.")]) as model:
            home = codex_cli.codex_home(machine.home / ".codex", model.url)
            machine.lineup("connect", "codex", "--hub", machine.hub.url)
            with codex_cli.Tui(
                home, machine.project, *TUI_ARGS, extra_env=machine_env(machine)
            ) as tui:
                await asyncio.to_thread(tui.wait_for, "Ask Codex")
                tui.submit("Make the file")
                await answered_in_order(machine, [("approve", {})])
                screen = await asyncio.to_thread(tui.wait_for, "Worked for", 60)
        assert (machine.project / "from-the-phone.txt").exists()
        assert DIALOG not in screen  # Codex waited on the hub; its own dialog never showed
