"""``lineup agent exec -- COMMAND...``: run a command only after a person approves it.

The person sees a high-risk approval card with the exact command, the working directory,
the host and user, and the *names* of the environment variables the command inherits
(never their values: they often hold secrets). Nothing runs before the answer; a rejection
(or any answer but ``approve``) ends the adapter with ``EXIT_REJECTED`` and the command
never starts. Approved, the command runs with its output shown locally and, when the run
belongs to a task, reported as the task's progress; the whole output is kept in a log file
and attached as an artifact, and the adapter exits with the command's own exit status.

The artifact's URL is a ``data:`` URL holding the log when it is short enough for the
protocol's 2000-character URL limit, otherwise a ``file://`` URL naming the log on the
agent's machine; either way its summary holds the exit status and the last lines.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import getpass
import os
import re
import shlex
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hub.sdk import Agent, Resolution, Task, TaskCancelled

EXIT_REJECTED = 77  # sysexits EX_NOPERM: a person did not permit the command
EXIT_NOT_FOUND = 127  # as shells report a command that does not exist
EXIT_CANCELLED = 130
MAX_URL_LENGTH = 2000
MAX_SUMMARY_LENGTH = 2000
MAX_ENV_NAMES = 300
_SENSITIVE = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)

Say = Callable[[str], None]


def environment_summary(environ: Mapping[str, str]) -> dict[str, Any]:
    """What the person is shown of the environment: the names only, never a value."""
    names = sorted(environ)
    return {
        "count": len(names),
        "names": names[:MAX_ENV_NAMES],
        "namesThatLookSensitive": [n for n in names if _SENSITIVE.search(n)],
    }


def approval_card_fields(
    command: Sequence[str], cwd: Path, environ: Mapping[str, str]
) -> dict[str, Any]:
    shown = shlex.join(command)
    host = socket.gethostname()
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    environment = environment_summary(environ)
    title = f"Run `{shown}` on {host}?"
    if len(title) > 300:
        title = f"Run `{shown[:250]}…` on {host}?"
    return {
        "title": title,
        "description": (
            f"An agent on {host} (user {user}) wants to run this command in {cwd}:\n\n{shown}"
        ),
        "impact": (
            f"It runs with {user}'s permissions on {host} and can change anything they can. "
            f"It inherits {environment['count']} environment variables (names under details). "
            "Nothing runs unless you approve."
        ),
        "risk": "high",
        "details": {
            "command": shown,
            "argv": list(command),
            "workingDirectory": str(cwd),
            "host": host,
            "user": user,
            "environment": environment,
        },
    }


async def run_after_approval(
    agent: Agent,
    command: Sequence[str],
    *,
    cwd: Path,
    environ: Mapping[str, str],
    log_dir: Path,
    task: Task | None = None,
    say: Say = print,
    progress_every_s: float = 1.0,
) -> int:
    """Ask, and run ``command`` only if approved; returns the exit status to exit with."""
    if not command:
        raise ValueError("no command to run")
    fields = approval_card_fields(command, cwd, environ)
    say(f"asking for approval to run: {fields['details']['command']}")
    if task is not None:
        await task.accept()
    try:
        answer = await _ask(agent, task, fields)
    except TaskCancelled:
        say("cancelled before a decision: the command was not run")
        assert task is not None
        await task.confirm_cancelled("Cancelled before the command ran.")
        return EXIT_CANCELLED
    if not answer.approved:
        comment = f" ({answer.comment})" if answer.comment else ""
        say(f"rejected by {answer.responded_by} via {answer.via}{comment}: the command was not run")
        if task is not None:
            await task.report("cancelled", summary=f"Rejected via {answer.via}{comment}; not run.")
        return EXIT_REJECTED
    say(f"approved by {answer.responded_by} via {answer.via}: running")
    return await _run(agent, command, cwd, environ, log_dir, task, say, progress_every_s)


async def _ask(agent: Agent, task: Task | None, fields: dict[str, Any]) -> Resolution:
    if task is not None:
        return await task.request_approval(**fields)
    return await agent.request_approval(**fields)


async def _run(
    agent: Agent,
    command: Sequence[str],
    cwd: Path,
    environ: Mapping[str, str],
    log_dir: Path,
    task: Task | None,
    say: Say,
    progress_every_s: float,
) -> int:
    _make_private_directory(log_dir)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    log_path = log_dir / f"exec-{stamp}.log"
    lines: list[str] = []
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=dict(environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as error:
        say(f"could not start the command: {error}")
        lines.append(f"could not start the command: {error}\n")
        _write_log(log_path, lines)
        await _report(agent, task, log_path, lines, EXIT_NOT_FOUND, started=False)
        return EXIT_NOT_FOUND
    reader = asyncio.create_task(_pump(process, lines, task, say, progress_every_s))
    stop = asyncio.ensure_future(
        task.cancellation.wait() if task is not None else asyncio.Event().wait()
    )
    await asyncio.wait({reader, stop}, return_when=asyncio.FIRST_COMPLETED)
    if not reader.done():  # cancelled while running: stop the command
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
    stop.cancel()
    await reader
    code = await process.wait()
    exit_code = code if code >= 0 else 128 - code  # killed by signal N → 128 + N
    _write_log(log_path, lines)
    if task is not None and task.cancel_requested:
        say("cancelled while running: the command was stopped")
        await task.confirm_cancelled(f"Stopped while running (exit status {exit_code}).")
        return EXIT_CANCELLED
    await _report(agent, task, log_path, lines, exit_code, started=True)
    say(f"exit status {exit_code}; log: {log_path}")
    return exit_code


async def _pump(
    process: asyncio.subprocess.Process,
    lines: list[str],
    task: Task | None,
    say: Say,
    progress_every_s: float,
) -> None:
    assert process.stdout is not None
    last_report = 0.0
    while True:
        raw = await process.stdout.readline()
        if not raw:
            return
        line = raw.decode(errors="replace")
        lines.append(line)
        say(line.rstrip("\n"))
        # One progress report per interval at most: a chatty command must not flood the log.
        now = time.monotonic()
        if task is not None and line.strip() and now - last_report >= progress_every_s:
            last_report = now
            with contextlib.suppress(Exception):
                await task.report("running", summary=line.strip()[:MAX_SUMMARY_LENGTH])


def _make_private_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)


def _file_url(path: Path) -> str:
    return path.resolve().as_uri()


def _write_log(path: Path, lines: list[str]) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.writelines(lines)


async def _report(
    agent: Agent,
    task: Task | None,
    log_path: Path,
    lines: list[str],
    exit_code: int,
    *,
    started: bool,
) -> None:
    text = "".join(lines)
    inline = "data:text/plain;base64," + base64.b64encode(text.encode()).decode()
    url = inline if len(inline) <= MAX_URL_LENGTH else _file_url(log_path)
    outcome = f"exit status {exit_code}" if started else "the command could not start"
    tail = "".join(lines[-20:])
    summary = f"{outcome}; last lines:\n{tail}" if tail else outcome
    summary = (
        summary[: MAX_SUMMARY_LENGTH - 1] + "…" if len(summary) > MAX_SUMMARY_LENGTH else summary
    )
    if task is not None:
        await task.add_artifact(log_path.name, url, mime_type="text/plain", summary=summary)
        if exit_code == 0:
            await task.succeed(outcome)
        else:
            await task.fail(outcome, summary=outcome)
    else:
        await agent.add_artifact(log_path.name, url, mime_type="text/plain", summary=summary)
