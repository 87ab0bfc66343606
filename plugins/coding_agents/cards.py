"""A coding agent's tool call as an approval card, and the person's answer as hook output.

The card shows the tool and its exact input as the card's ``action``, so the answer is
bound to that input by its hash: an answer to any other input is refused on every
surface, and the hook acts on ``approved_action``, which recomputes the hash. Text fields
the CLI takes back edited (Claude Code's ``updatedInput``) are editable; Codex refuses
``updatedInput`` from hooks, so its cards take no edits and say so.

The answers are the ones the CLI knows: allow once, always allow (Claude Code's own
``permission_suggestions``, returned as ``updatedPermissions``: the rule the person saw on
the card), and deny, whose comment is returned to the model as the reason.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hub.core.approvals.policies import POLICY_VIA
from hub.protocol.actions import ProposedAction
from hub.protocol.interactions import InteractionCard, InteractionType, Option, Risk
from hub.sdk import ActionMismatch, NotApproved, Resolution
from plugins.coding_agents.risk import read_risk

# "approve" is the id every surface and policy knows as the approving option.
ALLOW = "approve"
ALWAYS = "always"
DENY = "deny"

MAX_DESCRIPTION_CHARS = 500  # the model's own words on why: a line, not an essay
CLI_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}
# The input fields a person may change before approving, per tool (Claude Code only).
EDITABLE = {
    "Bash": ("command",),
    "Write": ("content",),
    "Edit": ("new_string",),
    "NotebookEdit": ("new_source",),
}


@dataclass(frozen=True)
class ToolCall:
    """One tool call a hook asks about."""

    cli: str  # claude-code, codex
    event: str  # PermissionRequest, PreToolUse
    tool: str
    tool_input: dict[str, Any]
    project: str
    suggestions: list[Any]

    @classmethod
    def from_hook(cls, cli: str, hook: dict[str, Any]) -> ToolCall:
        tool_input = hook.get("tool_input")
        suggestions = hook.get("permission_suggestions")
        return cls(
            cli=cli,
            event=str(hook.get("hook_event_name") or ""),
            tool=str(hook.get("tool_name") or "tool"),
            tool_input=tool_input if isinstance(tool_input, dict) else {},
            project=str(hook.get("cwd") or ""),
            suggestions=suggestions if isinstance(suggestions, list) else [],
        )

    @property
    def editable(self) -> bool:
        return self.cli == "claude-code"

    def action(self) -> ProposedAction:
        """The exact call: the tool, then each input field as the CLI gave it (nested
        values as JSON text, so that every field is shown and hashed as it is)."""
        fields: dict[str, Any] = {"tool": self.tool}
        for name, value in self.tool_input.items():
            if name == "tool":
                name = "tool_input.tool"
            fields[name] = value if _plain(value) else json.dumps(value, sort_keys=True)
        editable = [
            name
            for name in EDITABLE.get(self.tool, ())
            if self.editable and isinstance(fields.get(name), str)
        ]
        kind = f"{self.cli}.{self.tool}"[:100]
        try:
            return ProposedAction(kind=kind, fields=fields, editable=editable)
        except ValueError:
            # Too large to show whole (a long file written, say): the card binds the answer
            # to the input's digest instead, and takes no edit.
            digest = hashlib.sha256(
                json.dumps(self.tool_input, sort_keys=True, ensure_ascii=False).encode()
            ).hexdigest()
            summary = {"tool": self.tool, "inputSha256": digest}
            for name in ("file_path", "notebook_path", "url"):
                if isinstance(self.tool_input.get(name), str):
                    summary[name] = self.tool_input[name][:2000]
            return ProposedAction(kind=kind, fields=summary)

    def card(self, card_id: str, expires_at: datetime) -> InteractionCard:
        risk, why = read_risk(self.tool, self.tool_input, self.project)
        name = CLI_NAMES.get(self.cli, self.cli)
        subject = self._subject()
        description = str(self.tool_input.get("description") or "")[:MAX_DESCRIPTION_CHARS]
        impact = why
        if not self.editable:
            impact += f" {name} does not take edits from the hub: answer it as proposed."
        options = [Option(id=ALLOW, label="Allow once", style="primary")]
        if self.suggestions:
            options.append(
                Option(
                    id=ALWAYS,
                    label="Always allow this",
                    description=_suggestions_text(self.suggestions),
                )
            )
        options.append(Option(id=DENY, label="Deny", style="danger"))
        details: dict[str, Any] = {"project": self.project, "tool": self.tool}
        if self.suggestions:
            details["alwaysAllow"] = _suggestions_text(self.suggestions)
        return InteractionCard(
            id=card_id,
            type=InteractionType.APPROVAL,
            title=f"{name} wants to {subject}"[:200],
            description=description,
            impact=impact,
            risk=Risk(risk),
            options=options,
            details=details,
            expires_at=expires_at,
            action=self.action(),
        )

    def _subject(self) -> str:
        if self.tool in ("Bash", "exec_command"):
            command = str(self.tool_input.get("command") or self.tool_input.get("cmd") or "")
            return f"run `{_one_line(command, 120)}`"
        path = self.tool_input.get("file_path") or self.tool_input.get("notebook_path")
        if path:
            return f"use {self.tool} on {path}"
        return f"use {self.tool}"

    def updated_input(self, fields: dict[str, Any]) -> dict[str, Any] | None:
        """The input to run when the approved ``fields`` differ from the proposed ones."""
        proposed = self.action()
        if fields == proposed.fields:
            return None
        updated = dict(self.tool_input)
        for name in EDITABLE.get(self.tool, ()):
            if name in fields:
                updated[name] = fields[name]
        return updated


def _plain(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _suggestions_text(suggestions: list[Any]) -> str:
    """Claude Code's suggested rules, as a person reads them: ``Bash(npm test:*)``, where."""
    rules: list[str] = []
    for suggestion in suggestions:
        if not isinstance(suggestion, dict):
            continue
        for rule in suggestion.get("rules") or []:
            if isinstance(rule, dict) and rule.get("toolName"):
                content = rule.get("ruleContent")
                rules.append(f"{rule['toolName']}({content})" if content else str(rule["toolName"]))
        if suggestion.get("type") == "setMode" and suggestion.get("mode"):
            rules.append(f"mode {suggestion['mode']}")
        where = suggestion.get("destination")
        if where and rules and not rules[-1].endswith("]"):
            rules[-1] += f" [{where}]"
    return ", ".join(rules)[:1000] or "the rule Claude Code suggests"


# --- the answer, as the hook's output ---------------------------------------------------


def allow_output(call: ToolCall, answer: Resolution, fields: dict[str, Any]) -> dict[str, Any]:
    """Allow, with the person's edit of the input (``fields``, checked against the hash)."""
    reason = f"Approved in the LineUp hub (via {answer.via})."
    updated = call.updated_input(fields) if call.editable else None
    if call.event == "PreToolUse":
        decision: dict[str, Any] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
        }
        if updated is not None:
            decision["updatedInput"] = updated
        return {"hookSpecificOutput": decision}
    behaviour: dict[str, Any] = {"behavior": "allow"}
    if updated is not None:
        behaviour["updatedInput"] = updated
    if answer.option_id == ALWAYS and call.suggestions and call.cli == "claude-code":
        behaviour["updatedPermissions"] = call.suggestions
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behaviour}}


def deny_output(call: ToolCall, reason: str) -> dict[str, Any]:
    if call.event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    return {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": reason},
        }
    }


def answer_output(
    call: ToolCall, answer: Resolution, waited_s: float, expires_at: datetime
) -> dict[str, Any]:
    """The hook output for a person's answer, an expiry, or a decision the policy made
    (an expiry that denies is the policy's, at the card's expiry time)."""
    if answer.withdrawn:
        return deny_output(call, "The call was answered at the terminal.")
    by_expiry = answer.expired or (
        answer.via == POLICY_VIA
        and answer.option_id not in (ALLOW, ALWAYS)
        and answer.responded_at >= expires_at
    )
    if by_expiry:
        minutes = max(1, round(waited_s / 60))
        return deny_output(
            call,
            f"No one answered in the LineUp hub within {minutes} min, so the call is denied "
            "(the card expired). Ask again later, or do it another way.",
        )
    if answer.option_id in (ALLOW, ALWAYS):
        try:
            fields = answer.approved_action(call.action(), approving=(ALLOW, ALWAYS))
        except (ActionMismatch, NotApproved):
            return deny_output(
                call, "Not allowed: the answer in the LineUp hub was for a different call."
            )
        return allow_output(call, answer, fields)
    comment = (answer.comment or "").strip()
    where = f"in the LineUp hub (via {answer.via})"
    if comment:
        return deny_output(call, f"Denied {where}: {comment}")
    return deny_output(call, f"Denied {where}.")
