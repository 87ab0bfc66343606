"""The command line the CLIs run for each hook event, and how to know it again.

``lineup connect`` writes it into the CLI's configuration; ``lineup disconnect`` and a
second ``connect`` find the entries they wrote by it (no extra key marks them: Claude Code
checks its settings against a schema). It runs this environment's Python, by absolute
path so that it works whatever the CLI's PATH is, on the hook's file, isolated and without
site-packages (``-I -S``): the hook needs only the standard library, and the virtual
environment's start-up (its ``.pth`` files, the editable install's finder) was 100-180 ms
of a 200 ms hook here, against 10-30 ms without it. The ``lineup-hook`` program does the
same, slower, and is recognised too.
"""

from __future__ import annotations

import os
import shlex
import sys

PROGRAM = "lineup-hook"
SCRIPT = os.path.join("coding_agents", "hook.py")


def build(cli: str, wait_s: int) -> str:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook.py")
    return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(script)} {cli} --wait {wait_s}"


def is_ours(command: object, cli: str) -> bool:
    """Whether ``command`` runs the hub's hook for ``cli``."""
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if len(argv) >= 2 and os.path.basename(argv[0]) == PROGRAM:
        return argv[1] == cli
    if argv and os.path.basename(argv[0]).startswith("python"):
        for at, word in enumerate(argv[1:-1], start=1):
            if word.endswith(os.sep + SCRIPT):
                return argv[at + 1] == cli
    return False
