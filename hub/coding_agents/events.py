"""The hook events the hub listens to, the same names in Claude Code and in Codex.

The gates are the events whose answer decides a tool call: they wait as long as a person
may take. The others only report, and must never hold the agent up.
"""

from __future__ import annotations

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SessionEnd",
)
GATE_EVENTS = ("PreToolUse", "PermissionRequest")
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")
