"""A Claude Code command hook for tests: records each call and answers as the test says.

Run as ``python recording_hook.py LOG_DIR ANSWERS_JSON``. Each call writes one JSON file to
LOG_DIR (its stdin, cwd, the CLAUDE*/ANTHROPIC* environment, its pid, and the signals it
got, saved again whenever something changes), then answers as ``answers[event]`` in
ANSWERS_JSON says: ``{"sleep": seconds, "output": {...}, "exit": code}``, sleeping first. It
logs SIGTERM, SIGINT, SIGHUP and SIGPIPE before ending, which is how a test learns how
Claude Code ends a hook it no longer waits for. Standard library only, like the hub's own
hook client.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

LOGGED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE)


def main(log_dir: Path, answers_path: Path) -> int:
    payload = json.loads(sys.stdin.read() or "{}")
    event = payload.get("hook_event_name", "unknown")
    record_path = log_dir / f"{time.time_ns()}-{os.getpid()}-{event}.json"
    record: dict[str, Any] = {
        "event": event,
        "stdin": payload,
        "cwd": os.getcwd(),
        "env": {
            name: value
            for name, value in os.environ.items()
            if name.startswith(("CLAUDE", "ANTHROPIC")) or name in ("PWD", "TERM")
        },
        "pid": os.getpid(),
        "parent": _command_line(os.getppid()),
        "signals": [],
    }

    def save() -> None:
        # Written whole and renamed, so a test polling the directory never reads half a file.
        partial = record_path.with_suffix(".tmp")
        partial.write_text(json.dumps(record))
        partial.replace(record_path)

    def on_signal(number: int, frame: object) -> None:
        record["signals"].append(signal.Signals(number).name)
        save()
        sys.exit(128 + number)

    for number in LOGGED_SIGNALS:
        signal.signal(number, on_signal)
    save()

    answers = json.loads(answers_path.read_text()) if answers_path.exists() else {}
    answer = answers.get(event, {})
    if answer.get("sleep"):
        time.sleep(answer["sleep"])
        record["slept"] = True
        save()
    if "output" in answer:
        try:
            print(json.dumps(answer["output"]), flush=True)
            record["printed"] = True
        except OSError as error:  # a closed stdout: Claude Code stopped listening
            record["print_error"] = repr(error)
        save()
    return int(answer.get("exit", 0))


def _command_line(pid: int) -> str:
    """A process's command line, to see what Claude Code runs a hook under."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
