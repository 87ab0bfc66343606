"""The hub's hooks in a Claude Code settings file: merged in, and taken out again.

A settings file (``~/.claude/settings.json`` or ``<project>/.claude/settings.json``) belongs
to the person; the hub only borrows one entry per hook event in it. ``install`` adds those
entries and leaves every other key, hook and matcher group as it was, in the same order;
running it again with the same arguments writes nothing, and running it with another
command (a new virtual environment, another ``--wait``) replaces the hub's entries instead of
adding a second set. ``uninstall`` takes out exactly what ``install`` put in.

The hub's entries are known by the command they run (``hub.coding_agents.hook_command``), not
by an extra key: Claude Code checks settings files against its schema and may ignore a file with
a key it does not know, so nothing but ``matcher``, ``hooks``, ``type``, ``command`` and
``timeout`` is ever written.

Standard library only: this runs from the command line on the agent's machine.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hub.coding_agents import hook_command
from hub.coding_agents.events import GATE_EVENTS, HOOK_EVENTS, TOOL_EVENTS

HOOK_AGENT = "claude-code"

# Claude Code matches a tool event's ``matcher`` against the tool name; ``*`` is every tool.
# Other events take no matcher (SessionStart's would filter on how the session started).
ALL_TOOLS = "*"

# A settings file the hub writes anew is the person's, like the ones Claude Code writes.
NEW_FILE_MODE = 0o644


class SettingsFileError(ValueError):
    """A settings file the hub will not edit, because it cannot tell what the file means.

    Raised before anything is written: the file is left exactly as it was.
    """

    code = "claude_settings_unreadable"

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.hint = (
            f"Fix {path} by hand (it must be a JSON object, and its 'hooks' an object of "
            "lists), or move it aside, then run the command again."
        )
        super().__init__(f"{path}: {problem}. {self.hint}")


def is_hub_hook(hook: Any) -> bool:
    """Whether one hook entry is the hub's: a command running the hub's hook for Claude Code."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    return hook_command.is_ours(hook.get("command"), HOOK_AGENT)


def install(path: Path, command: str, *, gate_timeout_s: int, report_timeout_s: int = 30) -> bool:
    """Merge the hub's hooks into the settings file at ``path``; True when the file changed.

    ``command`` is the shell command each hook runs; it must run the hub's hook
    (``hook_command.build``) so that ``uninstall`` can find it again. A missing file (and
    its parent folders) is created. Raises ``SettingsFileError`` for a file that is not a
    JSON object or whose ``hooks`` is not an object of lists, and ``ValueError`` for a
    command that is not the hub's hook or a timeout that is not positive.
    """
    if not is_hub_hook({"type": "command", "command": command}):
        raise ValueError(
            f"the hook command must run the hub's hook for {HOOK_AGENT}, not {command!r}"
        )
    if gate_timeout_s <= 0 or report_timeout_s <= 0:
        raise ValueError("hook timeouts must be positive numbers of seconds")
    settings = _read(path)
    hooks = settings.get("hooks", {})
    merged: dict[str, Any] = {}
    for event, groups in hooks.items():
        if event in HOOK_EVENTS:
            timeout = gate_timeout_s if event in GATE_EVENTS else report_timeout_s
            merged[event] = _with_ours(groups, _hub_group(event, command, timeout))
        else:
            merged[event] = _without_ours(groups)
    for event in HOOK_EVENTS:
        if event not in merged:
            timeout = gate_timeout_s if event in GATE_EVENTS else report_timeout_s
            merged[event] = [_hub_group(event, command, timeout)]
    updated = dict(settings)
    updated["hooks"] = _drop_emptied(hooks, merged)
    return _write_if_changed(path, settings, updated)


def uninstall(path: Path) -> bool:
    """Take the hub's hooks out of the settings file at ``path``; True when the file changed.

    Matcher groups and events left empty by the removal go too, and so does ``hooks``
    itself; everything else stays. A missing file is left missing. Raises
    ``SettingsFileError`` as ``install`` does.
    """
    if not path.exists():
        return False
    settings = _read(path)
    if "hooks" not in settings:
        return False
    hooks = settings["hooks"]
    remaining = _drop_emptied(hooks, {event: _without_ours(g) for event, g in hooks.items()})
    updated = dict(settings)
    if remaining or not hooks:
        updated["hooks"] = remaining
    else:
        del updated["hooks"]
    return _write_if_changed(path, settings, updated)


def _hub_group(event: str, command: str, timeout: int) -> dict[str, Any]:
    hook = {"type": "command", "command": command, "timeout": timeout}
    if event in TOOL_EVENTS:
        return {"matcher": ALL_TOOLS, "hooks": [hook]}
    return {"hooks": [hook]}


def _is_group_of_ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and bool(hooks) and all(is_hub_hook(h) for h in hooks)


def _with_ours(groups: list[Any], ours: dict[str, Any]) -> list[Any]:
    """The event's groups with the hub's one group where the first of its old ones was.

    Keeping the position (rather than appending) makes a second run a no-op even when the
    person added groups after the hub's.
    """
    result: list[Any] = []
    placed = False
    for group in _without_ours(groups, keep_groups_of_ours=True):
        if _is_group_of_ours(group):
            if not placed:
                result.append(ours)
                placed = True
        else:
            result.append(group)
    if not placed:
        result.append(ours)
    return result


def _without_ours(groups: list[Any], *, keep_groups_of_ours: bool = False) -> list[Any]:
    """The event's groups with the hub's hooks taken out, and groups left empty dropped.

    A group the person shares with the hub's hook (they added their own hook to it) keeps
    the person's hooks. Groups that are not shaped as Claude Code expects are kept as they
    are: they are not the hub's to judge.
    """
    result: list[Any] = []
    for group in groups:
        if _is_group_of_ours(group):
            if keep_groups_of_ours:
                result.append(group)
            continue
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(hooks, list) and any(is_hub_hook(h) for h in hooks):
            result.append({**group, "hooks": [h for h in hooks if not is_hub_hook(h)]})
        else:
            result.append(group)
    return result


def _drop_emptied(before: dict[str, Any], after: dict[str, list[Any]]) -> dict[str, Any]:
    """``after`` without the events that only the hub's removal left empty."""
    return {event: groups for event, groups in after.items() if groups or not before.get(event)}


def _read(path: Path) -> dict[str, Any]:
    """The settings as an ordered dict, checked to be a shape the hub can edit safely."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsFileError(path, f"cannot be read ({error})") from error
    if not text.strip():
        # An empty file is what some editors leave behind; Claude Code treats it as no settings.
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsFileError(path, f"is not valid JSON ({error})") from error
    if not isinstance(settings, dict):
        raise SettingsFileError(path, "is not a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError(path, "has a 'hooks' that is not an object")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise SettingsFileError(path, f"has a 'hooks.{event}' that is not a list")
    return settings


def _write_if_changed(path: Path, before: dict[str, Any], after: dict[str, Any]) -> bool:
    # Compared as text so that a change of key order also counts as a change.
    if path.exists() and json.dumps(before) == json.dumps(after):
        return False
    _write_atomically(path, json.dumps(after, indent=2, ensure_ascii=False) + "\n")
    return True


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file in one rename, so Claude Code never reads half a file.

    A settings file kept as a symlink (dotfiles repositories do this) stays a symlink: the
    file it points to is the one replaced.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as temp:
            temp.write(text)
            temp.flush()
            os.fsync(temp.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
