"""Every ``lineup`` command's --help says what it does and shows an example that parses, in
the words of someone running the hub: no issue numbers, spec sections or module names."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from hub.cli import _every_command, build_parser

pytestmark = pytest.mark.same_on_every_database

ENVIRONMENT = re.compile(r"^[A-Z_]+=")
INTERNAL = re.compile(r"§|#\d|\bhub\.[a-z_]+|\w+\.py\b|\bspec\b|\bissue\b", re.IGNORECASE)


def test_every_help_says_what_the_command_does_with_an_example_that_parses() -> None:
    parser = build_parser()
    for command, _words in _every_command(parser, ""):
        text = command.format_help()
        assert command.description, f"{command.prog} --help does not say what it does"
        assert not INTERNAL.search(text), f"{command.prog} --help: {INTERNAL.search(text)}"
        example = text.split("example:\n", 1)[1].strip()
        words = shlex.split(example.split(" < ")[0])
        while ENVIRONMENT.match(words[0]):  # LINEUP_…=… before the command
            words.pop(0)
        assert " ".join(words).startswith(command.prog), example
        if not any(isinstance(a, argparse._SubParsersAction) for a in command._actions):
            parser.parse_args(words[1:])  # a command, not a group: its example is a valid call
