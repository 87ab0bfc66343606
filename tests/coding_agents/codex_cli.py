"""Drivers for the real Codex CLI in tests: a Codex home, ``codex exec``, ``codex app-server``.

The CLI comes from ``.cache/coding-clis`` in the repository (installed by the project's
script); tests that need it call ``require_codex()``, which skips with the reason when it is
not there. Every run is bounded and its processes are ended when the driver is done.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = (REPO / ".cache/coding-clis/node_modules/.bin/codex",)


def find_codex() -> Path | None:
    return next((path for path in CANDIDATES if path.exists()), None)


def require_codex() -> Path:
    codex = find_codex()
    if codex is None:
        pytest.skip(
            "the Codex CLI is not installed (.cache/coding-clis); run the CLI install script"
        )
    return codex


def codex_home(directory: Path, model_url: str) -> Path:
    """A Codex home whose only model is the fake at ``model_url``, with no outside calls."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text(
        f'model = "gpt-fake"\n'
        f'model_provider = "fake"\n'
        f"\n"
        f"[model_providers.fake]\n"
        f'name = "fake"\n'
        f'base_url = "{model_url}"\n'
        f'wire_api = "responses"\n'
        f"\n"
        # Analytics and the plugin catalogue are the only calls Codex makes beyond the model.
        f"[analytics]\n"
        f"enabled = false\n"
        f"\n"
        f"[features]\n"
        f"plugins = false\n"
    )
    return directory


def environment(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, CODEX_HOME=str(home), **(extra_env or {}))
    env.pop("OPENAI_API_KEY", None)
    return env


@dataclass
class ExecResult:
    returncode: int
    stdout: str
    stderr: str


def run_exec(
    prompt: str,
    cwd: Path,
    codex_home: Path,
    extra_args: tuple[str, ...] = ("--approve-for-me",),
    timeout: float = 60,
    extra_env: Mapping[str, str] | None = None,
) -> ExecResult:
    """Run ``codex exec`` once, headless, in ``cwd``; stdin is closed so it never waits on it."""
    codex = require_codex()
    args = [str(codex), "exec", "--skip-git-repo-check", "-C", str(cwd), *extra_args, prompt]
    # The npm `codex` is a Node wrapper around the native binary; its own process group lets
    # a timeout end both, not only the wrapper.
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(codex_home, extra_env),
        cwd=cwd,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        end_group(process)
    return ExecResult(process.returncode, stdout, stderr)


def end_group(process: subprocess.Popen[str]) -> None:
    """Kill what is left of the process group ``process`` leads, then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


class AppServer:
    """``codex app-server`` over stdio JSON-RPC, as an editor would drive it.

    Messages are read on a thread into a queue; ``request`` waits for its answer, and
    server-to-client requests (approvals) and notifications are collected in ``seen`` and
    handed to ``next_message``. Use as a context manager: the process is killed at the end.
    """

    def __init__(self, home: Path, cwd: Path, extra_env: Mapping[str, str] | None = None) -> None:
        self.home = home
        self.cwd = cwd
        self.extra_env = extra_env
        self.seen: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self._ids = 0
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> AppServer:
        codex = require_codex()
        self._process = subprocess.Popen(
            [str(codex), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=environment(self.home, self.extra_env),
            cwd=self.cwd,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request("initialize", {"clientInfo": {"name": "lineup-tests", "version": "0"}})
        self.notify("initialized")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._process is not None and self._process.stdin is not None
        end_group(self._process)
        self._reader.join(timeout=10)
        self._process.stdin.close()
        assert self._process.stdout is not None
        self._process.stdout.close()

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            if line.strip():
                self._inbox.put(json.loads(line))

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(self, method: str, params: dict[str, Any], timeout: float = 30) -> Any:
        self._ids += 1
        number = self._ids
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while True:
            message = self._inbox.get(timeout=timeout)
            if message.get("id") == number and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.seen.append(message)

    def respond(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def next_message(self, timeout: float = 30) -> dict[str, Any]:
        """The next message the server sent that was not an answer to our request."""
        if self.seen:
            return self.seen.pop(0)
        return self._inbox.get(timeout=timeout)

    def hooks(self) -> list[dict[str, Any]]:
        """Codex's own list of the hooks it found for ``cwd``, with key, hash and trust."""
        result = self.request("hooks/list", {"cwds": [str(self.cwd)]})
        return [hook for entry in result["data"] for hook in entry["hooks"]]

    def start_turn(self, prompt: str, **thread_params: Any) -> str:
        """Start a thread in ``cwd`` and a turn with ``prompt``; returns the thread id."""
        thread = self.request("thread/start", {"cwd": str(self.cwd), **thread_params})
        thread_id: str = thread["thread"]["id"]
        self.request(
            "turn/start",
            {"threadId": thread_id, "input": [{"type": "text", "text": prompt}]},
        )
        return thread_id

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        """Skip messages until one with ``method`` comes; every skipped one stays in ``log``."""
        while True:
            message = self.next_message(timeout=timeout)
            self.log.append(message)
            if message.get("method") == method:
                return message


class Tui:
    """The Codex terminal UI in a tmux pane on a tmux server of its own (``-L``).

    The server is killed at the end, with everything in it, so nothing outlives the test.
    """

    def __init__(
        self,
        home: Path,
        cwd: Path,
        *args: str,
        width: int = 160,
        height: int = 50,
        extra_env: Mapping[str, str] | None = None,
    ):
        self.home = home
        self.extra_env = dict(extra_env or {})
        self.cwd = cwd
        self.args = args
        self.size = (str(width), str(height))
        self.socket = f"lineup-codex-{os.getpid()}-{id(self)}"

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def __enter__(self) -> Tui:
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        codex = require_codex()
        env = environment(self.home, self.extra_env)
        names = ("CODEX_HOME", "PATH", *self.extra_env)
        exports = " ".join(f"{name}={shlex.quote(env[name])}" for name in names)
        # The pane outlives Codex so that a screen read after it quit still shows why.
        command = (
            f"env {exports} {shlex.join([str(codex), *self.args])};"
            f' echo "[codex exited $?]"; sleep 600'
        )
        self._tmux(
            "new-session", "-d", "-x", self.size[0], "-y", self.size[1],
            "-c", str(self.cwd), command,
        )  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmux("kill-server")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)

    def submit(self, prompt: str) -> None:
        """Type ``prompt`` into the composer and send it."""
        self.type(prompt)
        self.wait_for(prompt)
        # Keys that follow typing too closely are taken as part of a paste, so Enter would
        # become a newline in the draft instead of sending it.
        time.sleep(0.5)
        self.keys("Enter")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """Wait until ``text`` shows on the screen; the screen is in the error if it never does."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise TimeoutError(f"{text!r} did not show; the screen was:\n{screen}")
            time.sleep(0.2)
