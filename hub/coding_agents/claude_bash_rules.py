"""Bash commands as Claude Code's permission rules see them.

A ``Bash(...)`` rule names one simple command; a command line joins several with ``&&``,
``;``, ``|`` and the like, and Claude Code allows the line only when a rule allows each of
them. It also checks, before any allow rule, where commands that create or remove files
would write: outside the working directories it asks even when a rule allows the command.

Standard library only: this runs inside the hook, on every tool call.
"""

from __future__ import annotations

import re
import shlex

# A rule's match against a call: True, False, or None when this module cannot tell.
Match = bool | None

# Commands whose file arguments Claude Code checks against the working directories (it
# names touch, mkdir, rm, rmdir, mv, cp and sed); the rest write files just as surely.
FILE_COMMANDS = frozenset(
    {
        "touch", "mkdir", "rm", "rmdir", "mv", "cp", "sed", "ln", "chmod", "chown", "tee",
        "dd", "install", "truncate", "rsync", "unlink", "shred",
    }
)  # fmt: skip
# Commands that move the shell, after which a relative path means somewhere else.
DIRECTORY_COMMANDS = frozenset({"cd", "pushd", "popd"})


def bash_matches(pattern: str, command: str) -> Match:
    """Whether a ``Bash(...)`` rule's content matches one simple command.

    ``prefix:*`` matches the prefix alone or followed by arguments; ``*`` matches any text,
    and a lone trailing `` *`` may also match nothing (``ls *`` matches ``ls``); otherwise
    the command must be exactly the pattern. Where the word boundary is not documented
    (``npm:*`` against ``npmx``), the answer is None.
    """
    command = command.strip()
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        if command == prefix or command.startswith(prefix + " "):
            return True
        return None if command.startswith(prefix) else False
    if "*" not in pattern:
        return command == pattern.strip()
    stars = pattern.count("*")
    if stars == 1 and pattern.endswith(" *"):
        regex = re.escape(pattern[:-2]) + r"(?: .*)?"
    else:
        regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(regex, command, re.DOTALL) is not None


def split_command(command: str) -> tuple[list[str], bool]:
    """The simple commands of a shell command line, and whether some of it is hidden.

    Splits on ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines outside quotes. "Hidden"
    (opaque) is anything a prefix rule cannot vouch for: command substitution, a variable,
    a redirect, a subshell or group, a comment, an unclosed quote.
    """
    parts: list[str] = []
    current: list[str] = []
    opaque = False
    quote: str | None = None
    i = 0

    def flush() -> None:
        text = "".join(current).strip()
        if text:
            parts.append(text)
        current.clear()

    while i < len(command):
        char = command[i]
        if quote == "'":
            quote = None if char == "'" else quote
            current.append(char)
            i += 1
            continue
        if char == "\\":
            current.append(command[i : i + 2])
            i += 2
            continue
        if char in "`$":
            opaque = True
        if quote == '"':
            quote = None if char == '"' else quote
            current.append(char)
            i += 1
            continue
        if char in "'\"":
            quote = char
        elif char in "<>(){}#":
            opaque = True
        elif command.startswith(("&&", "||"), i):
            flush()
            i += 2
            continue
        elif char in ";|&\n":
            flush()
            i += 1
            continue
        current.append(char)
        i += 1
    flush()
    return parts, opaque or quote is not None


def writes_files_unchecked(parts: list[str]) -> bool:
    """Whether a file command in ``parts`` may write outside the working directory.

    Only relative paths that stay below the current directory are taken as inside it; an
    absolute path, ``..``, ``~``, a glob or a change of directory make it unknown here.
    """
    programs = []
    for part in parts:
        try:
            argv = shlex.split(part)
        except ValueError:
            return True
        if argv:
            programs.append((argv[0], argv[1:]))
    if not any(program in FILE_COMMANDS for program, _ in programs):
        return False
    if any(program in DIRECTORY_COMMANDS for program, _ in programs):
        return True
    for program, args in programs:
        if program not in FILE_COMMANDS:
            continue
        for arg in args:
            if arg.startswith("-"):
                continue
            if arg.startswith(("/", "~")) or ".." in arg.split("/") or any(c in arg for c in "*?["):
                return True
    return False
