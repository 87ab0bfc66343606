"""The risk of a coding agent's tool call, read from the call itself.

A card's risk decides how it is shown (a high-risk card takes a second, deliberate step
on every surface) and which workspace rules apply to it. What can destroy work or reach
past the project is high: recursive deletes, force pushes and hard resets, dropped or
emptied tables, disk and permission sweeps, piping a download into a shell, privilege
escalation, and any write to a file outside the project. A command the agent runs inside
the project is medium; a call that only reads is low.

The reading errs high: a command is matched on its words wherever they appear (after a
``;``, ``&&``, in a subshell), so quoting does not hide ``rm -rf`` from it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

HIGH_COMMANDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (why, re.compile(pattern, re.IGNORECASE))
    for why, pattern in (
        ("deletes recursively", r"\brm\s+(-[a-z]*[rf][a-z]*\s+)*-[a-z]*r|\brm\s+--recursive"),
        ("force-pushes", r"\bgit\s+push\b[^;&|]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+)"),
        ("discards work", r"\bgit\s+(reset\s+--hard|clean\s+-[a-z]*f|checkout\s+--\s)"),
        ("drops or empties data", r"\b(drop\s+(table|database|schema)|truncate\s+table)\b"),
        ("deletes rows", r"\bdelete\s+from\b"),
        ("writes a disk", r"\b(mkfs(\.\w+)?|dd\s+[^;&|]*\bof=)"),
        ("changes permissions wholesale", r"\bchmod\s+-R\b|\bchown\s+-R\b"),
        ("runs a download", r"\b(curl|wget)\b[^;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b"),
        ("runs as root", r"(^|[;&|]\s*)sudo\b"),
        ("migrates a database", r"\b(migrate|migration)\b[^;&|]*\b(prod|production)\b"),
    )
)

READ_ONLY_TOOLS = frozenset(
    {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "TodoWrite", "TodoRead"}
)
WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def read_risk(tool: str, tool_input: dict[str, Any], project: str) -> tuple[str, str]:
    """``(risk, why)`` for one call: ``high``/``medium``/``low`` and a short reason."""
    if tool == "Bash" or tool == "exec_command" or "command" in tool_input:
        command = str(tool_input.get("command") or tool_input.get("cmd") or "")
        for why, pattern in HIGH_COMMANDS:
            if pattern.search(command):
                return "high", f"The command {why}."
        outside = _redirect_outside(command, project)
        if outside:
            return "high", f"The command writes outside the project: {outside}."
        return "medium", "The command runs in the project."
    if tool in WRITING_TOOLS:
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
        if path and not inside(path, project):
            return "high", f"It writes outside the project: {path}."
        return "medium", "It changes a file in the project."
    if tool in READ_ONLY_TOOLS:
        return "low", "It only reads."
    return "medium", "The agent asks to use a tool."


def inside(path: str, project: str) -> bool:
    """Whether ``path`` (absolute, or relative to the project) lies in ``project``."""
    if not project:
        return False
    base = PurePosixPath(project)
    target = PurePosixPath(path)
    if not target.is_absolute():
        target = base / target
    parts: list[str] = []
    for part in target.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    resolved = PurePosixPath(*parts) if parts else PurePosixPath("/")
    return resolved == base or base in resolved.parents


_REDIRECT = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?)\s*([^\s;&|<>]+)")


def _redirect_outside(command: str, project: str) -> str | None:
    for match in _REDIRECT.finditer(command):
        target = match.group(1).strip("'\"")
        if target.startswith("/dev/") or target.startswith("&"):
            continue
        if target.startswith("~") or not inside(target, project):
            return target
    return None
