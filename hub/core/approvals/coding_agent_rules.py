"""The tool calls a workspace's coding agents may never make: rules its owners write.

A connected Claude Code or Codex asks the hub before each tool call. A call one of these
rules names is refused there and then, with the rule as the reason, before anyone is
asked: no card, so no one can approve it by mistake, on any surface. It is how a team says
"never force-push, never touch production" once for every machine, where the CLIs' own
rules live in each machine's files. For Codex, whose hooks cannot change a call, this is
the one thing its ``PreToolUse`` hook may do.

The rules are written in Claude Code's permission syntax, so they read the same as the
rules people already keep in ``.claude/settings.json``: ``Tool`` or ``Tool(content)``, as
``Bash(git push --force:*)``, ``Bash(rm -rf *)``, ``Edit(//etc/**)`` or ``WebFetch``. The
core checks their form; what a rule's content matches is read where calls are matched
(``plugins.coding_agents.workspace_rules``, with the CLIs' own matcher). ``~`` is refused:
the hub cannot know each machine's home folder, so such a rule would never match.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from hub.core.errors import InvalidInput
from hub.core.store.policy_models import CodingAgentRules

Connection = Any
MAX_RULES = 200
MAX_RULE_CHARS = 500
# A tool's name (``Bash``, ``mcp__github__*``), then its content in parentheses, if any.
_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9_*-]*(\((.*)\))?$", re.DOTALL)


async def deny_rules(workspace_id: str, connection: Connection = None) -> list[str]:
    """The workspace's rules naming calls its coding agents may never make."""
    query = CodingAgentRules.filter(workspace_id=workspace_id)
    if connection is not None:
        query = query.using_db(connection)
    row = await query.first()
    return [] if row is None else list(row.deny)


def rules_view(deny: list[str]) -> dict[str, Any]:
    return {"deny": deny}


def checked_rules(rules: list[str]) -> list[str]:
    """The rules as they are kept: trimmed, blank lines and repeats dropped, in order.

    Raises ``InvalidInput`` (``invalid_rule``) naming the first rule that is not one."""
    kept: list[str] = []
    for number, raw in enumerate(rules, start=1):
        rule = raw.strip() if isinstance(raw, str) else ""
        if not isinstance(raw, str) or (rule and _problem(rule)):
            problem = _problem(rule) if isinstance(raw, str) else "it is not text"
            raise InvalidInput(
                f"Rule {number} ({rule[:80]!r}) is not a rule: {problem}.",
                code="invalid_rule",
                hint="Write one rule per line as Claude Code does: Tool or Tool(content), "
                "for example Bash(git push --force:*) or Edit(//etc/**).",
            )
        if rule and rule not in kept:
            kept.append(rule)
    if len(kept) > MAX_RULES:
        raise InvalidInput(
            f"A workspace keeps at most {MAX_RULES} rules for its coding agents.",
            code="too_many_rules",
            hint="Join rules with a wider pattern (Bash(terraform:*) for every terraform command).",
        )
    return kept


def _problem(rule: str) -> str | None:
    if len(rule) > MAX_RULE_CHARS:
        return f"a rule is at most {MAX_RULE_CHARS} characters"
    found = _FORM.match(rule)
    if found is None:
        return "it must be a tool's name, then what it matches in parentheses if anything"
    content = (found.group(2) or "").strip()
    if content.startswith("~"):
        return (
            "the hub cannot know each machine's home folder (~); "
            "write the path in full after //, as Edit(//home/me/.ssh/**)"
        )
    return None


async def update_deny_rules(
    workspace_id: str, rules: list[str], *, by: str, now: datetime
) -> list[str]:
    """Replace the workspace's rules; returns them as kept. Nothing changes when one of
    them is refused (``checked_rules``)."""
    kept = checked_rules(rules)
    updated = await CodingAgentRules.filter(workspace_id=workspace_id).update(
        deny=kept, updated_by=by, updated_at=now
    )
    if not updated:
        await CodingAgentRules.create(
            workspace_id=workspace_id, deny=kept, updated_by=by, updated_at=now
        )
    return kept


__all__ = ["checked_rules", "deny_rules", "rules_view", "update_deny_rules"]
