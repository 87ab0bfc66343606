"""The cards of the parity suite: each kind an agent can ask, the answer a person gives on
every surface, and an answer each surface must refuse first (and decide nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.protocol.actions import ProposedAction


@dataclass(frozen=True)
class Kind:
    name: str
    card: dict[str, Any]  # the card as the agent asks it (the wire's camelCase), without id
    answer: dict[str, Any]  # what the person answers, as the hub must record it
    wrong: dict[str, Any] | None = None  # refused first, on every surface, deciding nothing

    def label(self, option_id: str) -> str:
        return next(str(o["label"]) for o in self.card["options"] if o["id"] == option_id)

    def titled(self, title: str) -> dict[str, Any]:
        return {**self.card, "title": title}

    def asked(self, title: str) -> tuple[str, dict[str, Any]]:
        """The MCP asking tool that asks this card titled ``title``, and its arguments."""
        card = self.card
        options = [{"id": o["id"], "label": o["label"]} for o in card.get("options", [])]
        if card["type"] == "approval":
            arguments = {"action": title, "impact": card.get("impact", "")}
            if card.get("action"):
                arguments["exact_action"] = card["action"]
            return "request_approval", arguments
        if card["type"] == "choice":
            arguments = {"question": title, "options": options}
            if card.get("multiple"):
                arguments |= {"multiple": True, "min_selections": card.get("minSelections")}
            return "ask_choice", arguments
        if card["type"] == "input":
            return "ask_input", {"question": title, "format": card["input"]["format"]}
        return "request_review", {"title": title, "content": card["content"]}


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "approval",
            {
                "type": "approval",
                "title": "Run the migration?",
                "impact": "Locks the orders table for a minute.",
                "options": [
                    {"id": "approve", "label": "Approve", "style": "primary"},
                    {"id": "reject", "label": "Reject", "style": "danger"},
                ],
            },
            {"optionId": "approve"},
        ),
        Kind(
            "choice",
            {
                "type": "choice",
                "title": "Which region?",
                "options": [
                    {"id": "eu", "label": "Europe"},
                    {"id": "us", "label": "United States"},
                ],
            },
            {"optionId": "us"},
        ),
        Kind(
            "several",
            {
                "type": "choice",
                "title": "Which checks?",
                "multiple": True,
                "minSelections": 1,
                "options": [
                    {"id": "lint", "label": "Lint"},
                    {"id": "unit", "label": "Unit tests"},
                    {"id": "e2e", "label": "End to end"},
                ],
            },
            {"optionIds": ["lint", "e2e"]},
            wrong={"optionIds": []},
        ),
        Kind(
            "input",
            {"type": "input", "title": "Contact address?", "input": {"format": "email"}},
            {"text": "ops@example.com"},
            wrong={"text": "not an address"},
        ),
        Kind(
            "review",
            {
                "type": "review",
                "title": "Review the plan",
                "content": "1. Back up\n2. Migrate",
                "options": [
                    {"id": "approve", "label": "Approve", "style": "primary"},
                    {"id": "request_changes", "label": "Request changes"},
                ],
            },
            {"optionId": "request_changes", "comment": "Add a rollback step"},
        ),
    )
}

# An approval of an exact action whose batch size the person may change before approving.
MIGRATION = ProposedAction(
    kind="db.migration",
    fields={"database": "prod-eu", "statement": "ALTER TABLE users ADD plan text", "batch": 500},
    editable=["batch"],
)
EDIT = Kind(
    "edit",
    {**KINDS["approval"].card, "title": "Run the users migration?", "action": MIGRATION.wire()},
    {"optionId": "approve", "action": {"batch": 250}},
)
