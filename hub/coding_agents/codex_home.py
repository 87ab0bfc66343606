"""Install the hub's hook into a Codex home (``CODEX_HOME``) and take it out again.

Codex reads command hooks from ``$CODEX_HOME/hooks.json`` but runs only those it trusts: for
each hook, ``config.toml`` must hold ``[hooks.state."<key>"] trusted_hash = "sha256:..."``,
where the key names the hook by position (``<hooks.json path>:<event>:<group>:<handler>``)
and the hash is a digest of what the hook is (event, matcher, command, timeout). An
untrusted hook is skipped without a word, so installing the hook without its trust would
look like it worked and gate nothing.

Our hooks are the handlers that run the hub's hook for Codex (``hook_command``); everything
else in both files is kept. Our group goes last in each event's list, so installing shifts
no one else's key. Taking ours out shifts the groups that came after it; their trust entries
are moved to their new keys so they stay trusted. ``config.toml`` is edited with tomlkit,
which keeps the person's comments and order; ``hooks.json`` is rewritten with two-space
indents (JSON has no comments to keep). When taking ours out leaves ``hooks.json`` with no
hook at all and no other key, the file is removed: an empty hooks file means the same as
none.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import InlineTable

from hub.coding_agents import hook_command
from hub.coding_agents.events import GATE_EVENTS, HOOK_EVENTS

CLI = "codex"

# PermissionRequest is the gate; PreToolUse can only deny but sees every call (with the
# model's call id); the others give the hub the session's timeline.
EVENTS = HOOK_EVENTS
REPORT_TIMEOUT_S = 30
# Codex cuts SessionEnd's timeout to 3 s (and hashes the cut value): a report takes a tenth
# of that, and writing 3 keeps the file saying what Codex does.
SESSION_END_TIMEOUT_S = 3


class CodexHomeError(ValueError):
    """A Codex home the hub will not edit; raised before anything is written."""

    def __init__(self, message: str, *, code: str, hint: str) -> None:
        super().__init__(f"{message}. {hint}")
        self.code = code
        self.hint = hint


HooksDoc = dict[str, Any]


def install(codex_home: Path, command: str, timeout_s: int) -> bool:
    """Put ``command`` in as a trusted hook for each of ``EVENTS``; True if a file changed.

    ``command`` is the hub's hook command (``hook_command.build``); Codex hands it to the
    shell, so a path with spaces must come quoted. ``timeout_s`` is how long Codex waits on
    the gates before it kills the hook and asks in its own way, so it must be longer than
    the hook waits for the hub; reports get 30 s. Running it again with the same arguments
    changes nothing.
    """
    if not hook_command.is_ours(command, CLI):
        raise CodexHomeError(
            f"the hook command must run the hub's hook for {CLI}, not {command!r}",
            code="codex_hook_command_invalid",
            hint="Pass the command hub.coding_agents.hook_command.build makes.",
        )
    if timeout_s < 1:
        raise CodexHomeError(
            f"hook timeout must be at least 1 second, not {timeout_s}",
            code="codex_hook_timeout_invalid",
            hint="Pass a timeout in whole seconds, 1 or more.",
        )
    return _rewrite(codex_home, command, timeout_s)


def uninstall(codex_home: Path) -> bool:
    """Take out every hook of ours and its trust entry; True if a file changed."""
    return _rewrite(codex_home, None, 0)


def hook_key(hooks_json: Path, event: str, group_index: int, handler_index: int) -> str:
    """The key Codex files a hook's state under in ``config.toml``."""
    return f"{os.path.abspath(hooks_json)}:{_snake(event)}:{group_index}:{handler_index}"


def trust_hash(event: str, command: str, timeout_s: int, matcher: str | None = None) -> str:
    """The ``trusted_hash`` Codex expects for a command hook, as its ``hooks/list`` reports.

    Codex digests a normalised identity of the hook rather than the file's text: the sorted,
    compact JSON of the event, the matcher (when there is one) and the one handler with its
    effective timeout.
    """
    identity: dict[str, Any] = {
        "event_name": _snake(event),
        "hooks": [{"type": "command", "command": command, "timeout": timeout_s, "async": False}],
    }
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _rewrite(codex_home: Path, command: str | None, timeout_s: int) -> bool:
    hooks_path = codex_home / "hooks.json"
    config_path = codex_home / "config.toml"
    # Both files are read and checked before either is written, so bad input changes nothing.
    hooks_doc = _read_hooks(hooks_path)
    config_text = _read_text(config_path)
    config = _parse_config(config_path, config_text)

    events: dict[str, list[Any]] = hooks_doc.setdefault("hooks", {})
    state = _state_table(config)
    for event in list(events):
        old_keys, moves = _strip_ours(hooks_path, event, events[event])
        for key in old_keys:
            state.pop(key, None)
        for old, new in moves:
            if old in state:
                state[new] = state.pop(old)
        if not events[event]:
            del events[event]
    if command is not None:
        for event in EVENTS:
            timeout = installed_timeout(event, timeout_s)
            groups = events.setdefault(event, [])
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
            entry = tomlkit.table()
            entry["trusted_hash"] = trust_hash(event, command, timeout)
            entry.add(tomlkit.nl())  # a blank line before whatever table follows
            state[hook_key(hooks_path, event, len(groups) - 1, 0)] = entry
    _drop_empty_state(config)

    changed = False
    if hooks_doc != _read_hooks(hooks_path):
        changed = True
        if hooks_doc == {"hooks": {}}:
            hooks_path.unlink(missing_ok=True)
        else:
            _write(hooks_path, json.dumps(hooks_doc, indent=2) + "\n")
    new_text = tomlkit.dumps(config)
    if new_text != config_text:
        changed = True
        _write(config_path, new_text)
    return changed


def _strip_ours(
    hooks_path: Path, event: str, groups: list[Any]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Take our handlers out of one event's groups, in place.

    Returns the keys our handlers had, and for every other handler whose position changed,
    its (old key, new key) in ascending order, so moving them one by one never overwrites.
    """
    ours: list[str] = []
    moves: list[tuple[str, str]] = []
    kept_groups: list[Any] = []
    for group_index, group in enumerate(groups):
        handlers = group.get("hooks", []) if isinstance(group, dict) else []
        kept = []
        for handler_index, handler in enumerate(handlers):
            old = hook_key(hooks_path, event, group_index, handler_index)
            if _is_ours(handler):
                ours.append(old)
            else:
                kept.append((old, handler))
        if handlers and not kept:
            continue
        new_group_index = len(kept_groups)
        for new_handler_index, (old, _) in enumerate(kept):
            new = hook_key(hooks_path, event, new_group_index, new_handler_index)
            if new != old:
                moves.append((old, new))
        if isinstance(group, dict) and len(kept) != len(handlers):
            group = dict(group, hooks=[handler for _, handler in kept])
        kept_groups.append(group)
    groups[:] = kept_groups
    return ours, moves


def installed_timeout(event: str, gate_timeout_s: int) -> int:
    """The timeout ``install`` writes for ``event``."""
    if event in GATE_EVENTS:
        return gate_timeout_s
    return SESSION_END_TIMEOUT_S if event == "SessionEnd" else REPORT_TIMEOUT_S


def _is_ours(handler: Any) -> bool:
    return (
        isinstance(handler, dict)
        and handler.get("type") == "command"
        and hook_command.is_ours(handler.get("command"), CLI)
    )


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _read_text(path: Path) -> str:
    try:
        return path.read_text() if path.exists() else ""
    except UnicodeDecodeError as exc:
        raise _unreadable(path, "is not UTF-8 text") from exc


def _read_hooks(path: Path) -> HooksDoc:
    if not path.exists():
        return {}
    try:
        doc = json.loads(_read_text(path))
    except ValueError as exc:
        raise _unreadable(path, f"is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("hooks", {}), dict):
        raise _unreadable(path, 'is not an object with a "hooks" object inside')
    if not all(isinstance(groups, list) for groups in doc.get("hooks", {}).values()):
        raise _unreadable(path, "has an event whose hooks are not a list")
    return doc


def _parse_config(path: Path, text: str) -> tomlkit.TOMLDocument:
    try:
        config = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise _unreadable(path, f"is not valid TOML ({exc})") from exc
    hooks = config.get("hooks")
    if hooks is not None and not (
        _is_table(hooks) and _is_table(hooks.get("state", tomlkit.table()))
    ):
        raise _unreadable(path, "has a hooks or hooks.state entry that is not a [table]")
    return config


def _is_table(value: Any) -> bool:
    # A table split across the file (``[hooks.state."a"]`` before and after ``[features]``)
    # comes back as a proxy, not a Table; inline tables are left alone, being one line.
    return isinstance(value, MutableMapping) and not isinstance(value, InlineTable)


def _state_table(config: tomlkit.TOMLDocument) -> MutableMapping[str, Any]:
    if "hooks" not in config:
        config["hooks"] = tomlkit.table(is_super_table=True)
    hooks = config["hooks"]
    if "state" not in hooks:
        hooks["state"] = tomlkit.table(is_super_table=True)
    state: MutableMapping[str, Any] = hooks["state"]
    return state


def _drop_empty_state(config: tomlkit.TOMLDocument) -> None:
    hooks = config["hooks"]
    if not hooks["state"]:
        del hooks["state"]
    if not hooks:
        del config["hooks"]


def _unreadable(path: Path, problem: str) -> CodexHomeError:
    return CodexHomeError(
        f"{path} {problem}",
        code="codex_config_unreadable",
        hint=f"Fix or move {path} away, then connect again; nothing was changed.",
    )


def _write(path: Path, text: str) -> None:
    # A half-written config.toml would stop Codex from starting; replace it whole.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".lineup-partial")
    partial.write_text(text)
    os.replace(partial, path)
