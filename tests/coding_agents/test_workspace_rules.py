"""The workspace's deny rules for coding agents: what is kept, and which calls they name."""

from __future__ import annotations

import pytest

from hub.coding_agents.claude_rules import Rule
from hub.core.approvals.coding_agent_rules import checked_rules
from hub.core.errors import InvalidInput
from plugins.coding_agents.cards import ToolCall
from plugins.coding_agents.workspace_rules import denying_rule

PROJECT = "/home/dev/shop"


def call(tool: str, **tool_input: object) -> ToolCall:
    return ToolCall("codex", "PreToolUse", tool, dict(tool_input), PROJECT, [])


def test_rules_are_kept_trimmed_without_blanks_or_repeats() -> None:
    kept = checked_rules(
        ["  Bash(git push --force:*) ", "", "WebFetch", "Bash(git push --force:*)"]
    )
    assert kept == ["Bash(git push --force:*)", "WebFetch"]
    # Everything the core keeps is a rule the matcher reads.
    assert all(Rule.parse(rule) is not None for rule in kept)


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("(git push)", "tool's name"),
        ("Bash git push", "tool's name"),
        ("Edit(~/.ssh/**)", "home folder"),
        ("Bash(" + "x" * 600 + ")", "at most 500"),
    ],
)
def test_a_rule_that_is_not_one_is_refused_by_number(rule: str, says: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        checked_rules(["WebFetch", rule])
    assert refused.value.code == "invalid_rule"
    assert "Rule 2" in refused.value.message
    assert says in refused.value.message


def test_a_command_is_named_wherever_it_is_in_the_line() -> None:
    rules = ["Bash(git push --force:*)"]
    assert denying_rule(rules, call("Bash", command="git push --force")) == rules[0]
    assert denying_rule(rules, call("Bash", command="make && git push --force origin")) == rules[0]
    assert denying_rule(rules, call("Bash", command="git push origin main")) is None
    # Where the matcher cannot tell, the rule does not deny: the CLI's own checks go on.
    assert denying_rule(rules, call("Bash", command="git push --force-with-lease")) is None


def test_path_rules_read_slash_inside_the_project_and_double_slash_as_absolute() -> None:
    assert denying_rule(["Edit(//etc/**)"], call("Write", file_path="/etc/hosts")) is not None
    assert denying_rule(["Edit(/deploy/**)"], call("Edit", file_path=f"{PROJECT}/deploy/a.yml"))
    assert denying_rule(["Edit(/deploy/**)"], call("Edit", file_path="/deploy/a.yml")) is None
    assert denying_rule(["Read(*.env)"], call("Read", file_path=f"{PROJECT}/app/prod.env"))
    assert denying_rule(["Read(*.env)"], call("Read", file_path=f"{PROJECT}/app/env.py")) is None
    assert denying_rule(["Read(.env)"], call("Read", file_path=f"{PROJECT}/app/.env"))


def test_a_tool_rule_names_the_whole_tool() -> None:
    assert denying_rule(["WebFetch"], call("WebFetch", url="https://example.com")) == "WebFetch"
    assert denying_rule(["WebFetch"], call("Bash", command="curl example.com")) is None
