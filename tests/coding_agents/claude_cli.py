"""Drivers for the real Claude Code CLI in tests: an isolated home, headless ``claude -p``
runs, and the terminal UI in a private tmux server.

The binary comes from ``scripts/install-coding-clis`` (``.cache/coding-clis``); a test that
asks for it without the install is skipped with the command to run. Everything stays on
loopback: the model is a ``FakeAnthropic`` and Claude Code's own outside calls are turned off
by environment.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hub.coding_agents.events import HOOK_EVENTS

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / ".cache" / "coding-clis" / "node_modules" / ".bin" / "claude"
TMUX = "/usr/bin/tmux"
RECORDING_HOOK = Path(__file__).with_name("recording_hook.py")
API_KEY = "sk-ant-fake-key-for-tests-0000000000"


def claude_binary() -> Path:
    """The installed CLI, or a skip that says how to install it."""
    if not os.access(CLAUDE, os.X_OK):
        pytest.skip(f"Claude Code is not installed; run scripts/install-coding-clis ({CLAUDE})")
    return CLAUDE


def claude_env(
    home: Path, model_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of one CLI run: its own HOME, the fake model, no outside traffic,
    and no retries (a dead model API would otherwise mean a minute of backoff). Hooks inherit
    it, so ``extra_env`` is where a test tells its hook how to reach the hub."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_AUTOUPDATER": "1",
        **(extra_env or {}),
    }


def prepare_home(home: Path, project: Path) -> None:
    """Answers the terminal UI's first-run questions in advance: onboarding done, the test
    API key approved (Claude Code keeps the key's last 20 characters) and the project's
    folder trusted."""
    home.mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "2.1.197",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            str(project): {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
                "allowedTools": [],
            }
        },
    }
    (home / ".claude.json").write_text(json.dumps(state))


def write_settings(project: Path, settings: dict[str, Any]) -> Path:
    """Writes the project's ``.claude/settings.json``, where the hub puts its hooks."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2))
    return path


def hooks_settings(
    command: str, timeout: int = 30, events: tuple[str, ...] = HOOK_EVENTS
) -> dict[str, Any]:
    """Settings that run one command hook for every event named."""
    return {
        "hooks": {
            event: [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": command, "timeout": timeout}],
                }
            ]
            for event in events
        }
    }


@dataclass
class PrintRun:
    """One finished ``claude -p`` run."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        """The ``--output-format json`` summary (``result``, ``is_error``, ``session_id`` ...)."""
        summary: dict[str, Any] = json.loads(self.stdout)
        return summary


def run_print(
    prompt: str,
    cwd: Path,
    home: Path,
    model_url: str,
    extra_args: tuple[str, ...] = (),
    timeout: float = 60,
    extra_env: Mapping[str, str] | None = None,
) -> PrintRun:
    """Runs ``claude -p PROMPT --output-format json`` to its end, stdin from /dev/null (else
    it waits for piped input), killed if it outlives ``timeout``."""
    completed = subprocess.run(
        [str(claude_binary()), "-p", prompt, "--output-format", "json", *extra_args],
        cwd=cwd,
        env=claude_env(home, model_url, extra_env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return PrintRun(completed.returncode, completed.stdout, completed.stderr)


class Terminal:
    """The interactive CLI in a detached tmux session on a private server socket."""

    def __init__(self, socket_name: str) -> None:
        self.socket_name = socket_name

    def tmux(self, *args: str, check: bool = True) -> str:
        return subprocess.run(
            [TMUX, "-L", self.socket_name, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=10,
        ).stdout

    def screen(self) -> str:
        """What the terminal shows now, as plain text."""
        return self.tmux("capture-pane", "-p", "-t", "cli").rstrip() + "\n"

    def send_keys(self, *keys: str) -> None:
        """Sends tmux key names (``Enter``, ``Escape``, ``Down``) or literal text."""
        self.tmux("send-keys", "-t", "cli", *keys)

    def type_line(self, text: str) -> None:
        """Types ``text`` literally, then Enter as its own key (a pasted newline would not
        submit)."""
        self.tmux("send-keys", "-t", "cli", "-l", text)
        time.sleep(0.3)  # the prompt box debounces input; an immediate Enter can be eaten
        self.send_keys("Enter")

    def wait_for(self, found: Callable[[str], bool] | str, timeout: float = 30) -> str:
        """Polls the screen until ``found`` (a predicate, or text to look for) holds;
        fails with the last screen otherwise."""
        check = found if callable(found) else (lambda screen: found in screen)
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(
            f"not on screen within {timeout}s: {found!r}\n--- screen ---\n{screen}"
        )

    def wait_for_permission_dialog(self, timeout: float = 30) -> str:
        return self.wait_for(is_permission_dialog, timeout)

    def allow(self) -> None:
        """Answers the permission dialog with its first option, "Yes"."""
        self.send_keys("Enter")

    def deny(self) -> None:
        """Answers the permission dialog with Escape, a "No" that ends the turn ("Interrupted
        · What should Claude do instead?") with no further model call and no hook event."""
        self.send_keys("Escape")


def is_permission_dialog(screen: str) -> bool:
    return "Do you want to" in screen and "Yes" in screen and "No" in screen


@contextmanager
def terminal_ui(
    project: Path,
    home: Path,
    model_url: str,
    extra_args: tuple[str, ...] = (),
    wait_ready: float = 30,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Terminal]:
    """Starts ``claude`` in a 200x50 tmux pane in ``project``, waits for its prompt box, and
    kills the tmux server at the end (which hangs up on the CLI: SessionEnd, reason "other")."""
    binary = claude_binary()
    prepare_home(home, project)
    terminal = Terminal(f"lineup-claude-{uuid.uuid4().hex[:12]}")
    env = claude_env(home, model_url, extra_env)
    command = " ".join(
        [
            "exec",
            # Only the test's environment: tmux would pass on its server's own.
            "env",
            "-i",
            *(shlex.quote(f"{k}={v}") for k, v in env.items()),
            shlex.quote(str(binary)),
            *map(shlex.quote, extra_args),
        ]
    )
    terminal.tmux(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "cli",
        "-x",
        "200",
        "-y",
        "50",
        "-c",
        str(project),
        command,
        # Chained into the same tmux command, so it holds even for a CLI that exits at once:
        # the pane stays, and its last screen can still be read.
        ";",
        "set-option",
        "-t",
        "cli",
        "remain-on-exit",
        "on",
    )
    socket_path = terminal.tmux("display-message", "-p", "#{socket_path}", check=False).strip()
    try:
        terminal.wait_for("? for shortcuts", wait_ready)
        yield terminal
    finally:
        terminal.tmux("kill-server", check=False)
        # tmux leaves its socket file behind when its server is killed.
        if socket_path:
            Path(socket_path).unlink(missing_ok=True)


class RecordingHook:
    """``recording_hook.py`` as a command hook with a directory of its own: ``command`` goes
    in the settings, ``answer()`` says what each event answers (``{"output": {...},
    "sleep": seconds, "exit": code}``), ``calls()`` reads back what each call saw."""

    def __init__(self, directory: Path, answers: dict[str, dict[str, Any]] | None = None) -> None:
        self.directory = directory
        self.log_dir = directory / "calls"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.answers_path = directory / "answers.json"
        self.answer(answers or {})

    def answer(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers_path.write_text(json.dumps(answers))

    @property
    def command(self) -> str:
        return " ".join(
            map(
                shlex.quote,
                [sys.executable, str(RECORDING_HOOK), str(self.log_dir), str(self.answers_path)],
            )
        )

    def calls(self, event: str | None = None) -> list[dict[str, Any]]:
        """The recorded calls in the order they started, optionally of one event."""
        records = [json.loads(path.read_text()) for path in sorted(self.log_dir.glob("*.json"))]
        return [r for r in records if event is None or r["event"] == event]

    def events(self) -> list[str]:
        return [r["event"] for r in self.calls()]

    def running(self, event: str) -> list[int]:
        """Pids of this hook's calls of ``event`` that have not ended yet."""
        return [call["pid"] for call in self.calls(event) if _alive(call["pid"])]

    def end_leftovers(self) -> None:
        """Ends calls still running. Claude Code leaves a hook running when the person
        answers first, even past its own exit, so a test that makes one cleans it up."""
        for call in self.calls():
            if _alive(call["pid"]):
                os.kill(call["pid"], signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
