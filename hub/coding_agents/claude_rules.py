"""What Claude Code itself would do with a tool call when no one can be asked.

In headless mode (``claude -p``) Claude Code shows no dialog: a call its permission rules
allow runs, one they deny is refused, and one that would need a person is refused too. The
hub's PreToolUse hook uses ``headless_verdict`` to tell these apart, so that only the calls
that truly need a person become approval cards.

The verdict follows Claude Code's documented rules: rules come from the managed, user,
project and local settings files and are checked deny first, then ask, then allow; the
permission mode sets the baseline. A project's own allow rules count only once the person
has trusted its folder (Claude Code's trust dialog). Where this module cannot be sure what
Claude Code would decide, it answers ``"asks"``: a person is asked, and nothing is ever
allowed on a guess. A deny or ask rule it cannot read is taken as one that may match, and
an allow rule it cannot read as one that does not.

Standard library only: this runs inside the hook, on every tool call.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from hub.coding_agents.claude_bash_rules import (
    Match,
    bash_matches,
    split_command,
    writes_files_unchecked,
)

Verdict = Literal["allowed", "denied", "asks"]

MANAGED_DIR = Path("/etc/claude-code")

# Tools Claude Code runs without asking for paths inside the working directories.
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
# Tools Claude Code runs without asking at all (its tools reference marks them so).
FREE_TOOLS = frozenset({"TodoWrite", "Agent", "Task"})
# The tools ``Edit(...)`` rules and the acceptEdits mode cover.
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# Claude Code never auto-approves a write below these (outside bypassPermissions).
PROTECTED_DIRS = frozenset(
    {".git", ".vscode", ".idea", ".claude", ".husky", ".cargo", ".devcontainer", ".yarn", ".mvn"}
)
PROTECTED_FILES = frozenset(
    {
        ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile",
        ".profile", ".zshenv", ".zlogin", ".zlogout", ".bash_login", ".bash_aliases",
        ".bash_logout", ".envrc", ".ripgreprc", ".mcp.json", ".claude.json", ".npmrc",
        ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs", ".pnpmfile.cjs",
        "bunfig.toml", ".bunfig.toml", ".bazelrc", ".bazelversion", ".bazeliskrc",
        ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml",
        ".lefthook.yaml", "gradle-wrapper.properties", "maven-wrapper.properties",
        ".devcontainer.json", "pyrightconfig.json",
    }
)  # fmt: skip
# The same tool under its older name, as rules written for either still apply.
TOOL_ALIASES = {"Task": "Agent"}

_RULE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One permission rule: ``Tool`` or ``Tool(content)``.

    ``root`` is the project a project or local settings file belongs to, against which a
    ``/path`` pattern is read; user and managed rules have none.
    """

    tool: str
    content: str | None
    root: Path | None = None

    @classmethod
    def parse(cls, text: str, root: Path | None = None) -> Rule | None:
        found = _RULE.match(text)
        if found is None:
            return None
        tool, content = found.group(1), found.group(2)
        # ``Bash(*)`` and ``Bash()`` are documented to mean the whole tool.
        if content is not None and content.strip() in ("", "*"):
            content = None
        return cls(tool=TOOL_ALIASES.get(tool, tool), content=content, root=root)


@dataclass
class Rules:
    """Every rule of the settings files Claude Code reads, merged as it merges them."""

    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    additional_directories: list[Path] = field(default_factory=list)
    # A file exists that could not be read: it may hold a deny or ask rule.
    unsure: bool = False


@dataclass(frozen=True)
class ToolCall:
    tool: str
    input: Mapping[str, Any]
    cwd: Path
    project: Path
    home: Path


def headless_verdict(
    hook_input: Mapping[str, Any],
    env: Mapping[str, str],
    home: Path,
    *,
    managed_dir: Path = MANAGED_DIR,
) -> Verdict:
    """What Claude Code would do with this PreToolUse call in ``claude -p``.

    ``hook_input`` is the hook's stdin (``tool_name``, ``tool_input``, ``cwd``,
    ``permission_mode``); ``env`` gives ``CLAUDE_PROJECT_DIR`` and ``CLAUDE_CONFIG_DIR``.
    """
    tool = hook_input.get("tool_name")
    tool_input = hook_input.get("tool_input")
    cwd = hook_input.get("cwd")
    if not isinstance(tool, str) or not isinstance(tool_input, Mapping) or not cwd:
        return "asks"
    project = Path(env.get("CLAUDE_PROJECT_DIR") or cwd)
    call = ToolCall(TOOL_ALIASES.get(tool, tool), tool_input, Path(cwd), project, home)
    rules = load_rules(project, env, home, managed_dir=managed_dir)
    mode = hook_input.get("permission_mode") or "default"

    verdict, unsure = _decide(call, rules, mode)
    if verdict == "allowed" and (unsure or rules.unsure):
        return "asks"
    if verdict == "asks" and mode == "dontAsk" and not (unsure or rules.unsure):
        # dontAsk refuses whatever would otherwise ask.
        return "denied"
    return verdict


def _decide(call: ToolCall, rules: Rules, mode: str) -> tuple[Verdict, bool]:
    """The verdict before doubt is applied, and whether a rule left this module unsure."""
    denied = _any_match(rules.deny, call)
    if denied is True:
        return "denied", False
    unsure = denied is None
    asked = _any_match(rules.ask, call)
    if asked is not False:
        # Ask rules hold even in bypassPermissions in current Claude Code.
        return "asks", unsure or asked is None
    if mode == "bypassPermissions":
        return "allowed", unsure
    if call.tool in EDIT_TOOLS and _writes_protected_path(call):
        return "asks", unsure
    if call.tool in FREE_TOOLS:
        return "allowed", unsure
    if call.tool in READ_TOOLS and _inside_working_directories(call, rules):
        return "allowed", unsure
    if mode == "plan":
        return "asks", unsure
    if (
        mode == "acceptEdits"
        and call.tool in EDIT_TOOLS
        and _inside_working_directories(call, rules)
    ):
        return "allowed", unsure
    if _allowed_by_rules(rules.allow, call, rules):
        return "allowed", unsure
    return "asks", unsure


def load_rules(
    project: Path, env: Mapping[str, str], home: Path, *, managed_dir: Path = MANAGED_DIR
) -> Rules:
    """The rules of the managed, user, project and local settings files, merged.

    Rule lists add up across files; managed settings with ``allowManagedPermissionRulesOnly``
    drop every other file's rules.
    """
    rules = Rules()
    managed_files = [managed_dir / "managed-settings.json"]
    drop_ins = managed_dir / "managed-settings.d"
    if drop_ins.is_dir():
        managed_files += sorted(drop_ins.glob("*.json"))
    managed = [_read_settings(path, rules) for path in managed_files]
    managed_only = any(s.get("allowManagedPermissionRulesOnly") is True for s in managed)

    config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
    user_dir = config_dir or home / ".claude"
    for settings in managed:
        _add_permissions(settings, None, home, rules, trusted=True)
    if managed_only:
        return rules
    _add_permissions(
        _read_settings(user_dir / "settings.json", rules), None, home, rules, trusted=True
    )
    trusted = project_is_trusted(project, (config_dir or home) / ".claude.json")
    for name in ("settings.json", "settings.local.json"):
        settings = _read_settings(project / ".claude" / name, rules)
        _add_permissions(settings, project, home, rules, trusted=trusted)
    return rules


def project_is_trusted(project: Path, global_config: Path) -> bool:
    """Whether the person accepted Claude Code's trust dialog for this project folder.

    Until they have, Claude Code applies a project's deny and ask rules but none of its
    allow rules: a cloned repository must not be able to allow itself commands. Only the
    folder itself counts here; a trusted parent folder may count for Claude Code too, and
    then this module merely asks a person more often than it would need to.
    """
    try:
        config = json.loads(global_config.read_text(encoding="utf-8"))
        entry = config["projects"][str(project)]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return False
    return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True


def _read_settings(path: Path, rules: Rules) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):
        rules.unsure = True
        return {}
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError:
        rules.unsure = True
        return {}
    if not isinstance(settings, dict):
        rules.unsure = True
        return {}
    return settings


def _add_permissions(
    settings: Mapping[str, Any], root: Path | None, home: Path, rules: Rules, *, trusted: bool
) -> None:
    permissions = settings.get("permissions", {})
    if not isinstance(permissions, Mapping):
        rules.unsure = True
        return
    for kind in ("allow", "ask", "deny") if trusted else ("ask", "deny"):
        entries = permissions.get(kind, [])
        if not isinstance(entries, list):
            rules.unsure = True
            continue
        for entry in entries:
            rule = Rule.parse(entry, root) if isinstance(entry, str) else None
            if rule is None:
                rules.unsure = True
            else:
                getattr(rules, kind).append(rule)
    directories = permissions.get("additionalDirectories") if trusted else None
    for directory in directories if isinstance(directories, list) else []:
        if isinstance(directory, str) and directory.startswith("~/"):
            rules.additional_directories.append(home / directory[2:])
        elif isinstance(directory, str) and directory.startswith("/"):
            rules.additional_directories.append(Path(directory))
        # A relative directory's base is not documented: it stays out, so reads there ask.


def _any_match(rules: Iterable[Rule], call: ToolCall) -> Match:
    """Whether any rule matches; None when none surely does but one might."""
    result: Match = False
    for rule in rules:
        found = rule_matches(rule, call)
        if found is True:
            return True
        if found is None:
            result = None
    return result


def _allowed_by_rules(allow: list[Rule], call: ToolCall, rules: Rules) -> bool:
    if call.tool != "Bash":
        return _any_match(allow, call) is True
    command = call.input.get("command")
    if not isinstance(command, str):
        return False
    parts, opaque = split_command(command)
    # Claude Code checks where file commands write before it looks at allow rules.
    inside = any(
        _is_within(call.cwd, root) for root in [call.project, *rules.additional_directories]
    )
    if not inside or writes_files_unchecked(parts):
        return False
    if any(r.tool == "Bash" and r.content is None for r in allow):
        return True
    # A compound command is allowed only when every one of its commands is: matching the
    # whole line would let ``Bash(npm *)`` allow ``npm test && rm -rf ~``.
    patterns = [r.content for r in allow if r.tool == "Bash" and r.content is not None]
    return (
        not opaque
        and bool(parts)
        and all(any(bash_matches(p, part) is True for p in patterns) for part in parts)
    )


def rule_matches(rule: Rule, call: ToolCall) -> Match:
    """Whether one rule matches one call, for deny and ask (and whole-call allow) use."""
    if rule.tool.startswith("mcp__"):
        return _mcp_matches(rule, call.tool)
    family = _family(rule.tool)
    if rule.content is None:
        if rule.tool == call.tool:
            return True
        # Whether ``Edit`` also names Write and the other edit tools is not documented.
        return None if call.tool in family else False
    if call.tool not in family:
        return False
    if rule.tool == "Bash":
        return _bash_rule_matches(rule.content, call)
    if rule.tool in ("Read", "Edit"):
        path = _call_path(call)
        if path is None:
            return None
        return _path_matches(rule, path, call)
    if rule.tool == "WebFetch":
        return _domain_matches(rule.content, call.input.get("url"))
    # A tool's own content rule this module does not read (``Agent(Explore)``, ...).
    return None


def _family(tool: str) -> frozenset[str]:
    if tool == "Read":
        return READ_TOOLS
    if tool == "Edit":
        return EDIT_TOOLS
    return frozenset({tool})


def _mcp_matches(rule: Rule, tool: str) -> Match:
    if rule.content is not None:
        return None if tool == rule.tool else False
    name = rule.tool.removesuffix("__*")
    if tool == name:
        return True
    # ``mcp__server`` names every tool of that server, never another server's.
    return name.count("__") == 1 and tool.startswith(name + "__")


def _bash_rule_matches(pattern: str, call: ToolCall) -> Match:
    command = call.input.get("command")
    if not isinstance(command, str):
        return None
    parts, opaque = split_command(command)
    found = [bash_matches(pattern, c) for c in [command.strip(), *parts]]
    if True in found:
        return True
    return None if opaque or None in found else False


def _call_path(call: ToolCall) -> Path | None:
    """The absolute path a file tool reads or writes; None when it cannot be told."""
    key = {"NotebookRead": "notebook_path", "NotebookEdit": "notebook_path", "LS": "path"}
    if call.tool in ("Glob", "Grep"):
        pattern = call.input.get("pattern", "")
        # A Glob pattern can reach outside its ``path``; the file is then not known here.
        if call.tool == "Glob" and (
            not isinstance(pattern, str) or pattern.startswith(("/", "~")) or ".." in pattern
        ):
            return None
        raw = call.input.get("path") or str(call.cwd)
    else:
        raw = call.input.get(key.get(call.tool, "file_path"))
    if not isinstance(raw, str) or not raw:
        return None
    if raw.startswith("~"):
        return None  # Claude Code's tools take absolute paths; "~" would be a literal name.
    return Path(os.path.normpath(call.cwd / raw))


def _path_matches(rule: Rule, path: Path, call: ToolCall) -> Match:
    pattern = _absolute_pattern(rule, call)
    if pattern is None:
        return None
    regex = _glob_regex(pattern)
    # A pattern naming a folder covers what is inside it, as in a gitignore file; and the
    # file as written and the file its symlinks lead to must agree.
    found = {_matches_or_inside(regex, p) for p in (path, Path(os.path.realpath(path)))}
    return found.pop() if len(found) == 1 else None


def _absolute_pattern(rule: Rule, call: ToolCall) -> str | None:
    content = (rule.content or "").strip().rstrip("/")
    if content.startswith("//"):
        return content[1:]
    if content == "~" or content.startswith("~/"):
        return str(call.home) + content[1:]
    if content.startswith("/"):
        # Relative to the project of the settings file; user and managed files have none
        # documented plainly enough to rely on.
        return str(rule.root) + content if rule.root is not None else None
    relative = content.removeprefix("./")
    if not relative or relative.startswith(".."):
        return None
    if "/" not in relative:
        # A bare name matches at any depth, as in gitignore.
        return f"{call.cwd}/**/{relative}"
    return f"{call.cwd}/{relative}"


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _matches_or_inside(regex: re.Pattern[str], path: Path) -> bool:
    return any(regex.fullmatch(str(p)) for p in (path, *path.parents))


def _domain_matches(content: str, url: Any) -> Match:
    if not content.startswith("domain:"):
        return None
    if not isinstance(url, str):
        return None
    host = (urlsplit(url).hostname or "").lower()
    domain = content.removeprefix("domain:").strip().lower()
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return host == domain


def _inside_working_directories(call: ToolCall, rules: Rules) -> bool:
    path = _call_path(call)
    if path is None:
        return False
    roots = [call.project, *rules.additional_directories]
    real = Path(os.path.realpath(path))
    return any(_is_within(path, root) for root in roots) and any(
        _is_within(real, Path(os.path.realpath(root))) for root in roots
    )


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _writes_protected_path(call: ToolCall) -> bool:
    path = _call_path(call)
    if path is None:
        return True
    names = path.parts
    return (
        any(name in PROTECTED_DIRS for name in names[:-1])
        or path.name in PROTECTED_FILES
        or "/.config/git/" in f"{path}/"
    )
