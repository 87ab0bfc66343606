"""The workspace's deny rules against one tool call of a coding agent.

The rules (``hub.core.approvals.coding_agent_rules``) are in Claude Code's syntax, so they
are matched with the same reading of that syntax the hook uses for Claude Code's own
settings (``hub.coding_agents.claude_rules``): a compound command is denied when any of
its commands is named (``git status && git push --force`` by ``Bash(git push --force:*)``),
a path rule covers what is inside a folder. A path rule starting with one ``/`` is read
inside the call's project, as a project's own settings file reads it; ``//`` starts an
absolute path.

Only a sure match denies. Where the matcher cannot tell (a command hidden in ``$(...)``
that no part of the line names), the call goes on to the CLI's own checks and, where it
would ask, to a person: these rules add refusals, they never decide a call is safe.
"""

from __future__ import annotations

from pathlib import Path

from hub.coding_agents.claude_rules import TOOL_ALIASES, Rule, rule_matches
from hub.coding_agents.claude_rules import ToolCall as RuleCall
from plugins.coding_agents.cards import ToolCall

# Rules naming ``~`` are refused when written (the hub cannot know the machine's home), so
# no match reads the home folder; this stands in for it.
_NO_HOME = Path("/nonexistent-home")


def denying_rule(rules: list[str], call: ToolCall) -> str | None:
    """The first of ``rules`` that surely names ``call``, as written; None if none does."""
    if not rules:
        return None
    project = Path(call.project or "/")
    tool = TOOL_ALIASES.get(call.tool, call.tool)
    matched = RuleCall(tool, call.tool_input, project, project, _NO_HOME)
    for text in rules:
        rule = Rule.parse(text, root=project)
        if rule is not None and rule_matches(rule, matched) is True:
            return text
    return None
