"""The action a card proposes, as every surface shows it, and edits read from a web form.

Every field is shown as inert text, exactly as the agent sent it, beside the short form of
the action's hash, so what a person approves is what they read. On the web, editable fields
become form controls; a form always sends the hash of the action it showed, and the core
re-checks every edit (``validate_response``), so nothing here is trusted to decide.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from hub.protocol.actions import ProposedAction, short_hash, value_type

FIELD_PREFIX = "action."  # form names of edited fields: "action.<field name>"
_INTEGER = re.compile(r"^[-+]?\d+$")


@dataclass(frozen=True, slots=True)
class ActionField:
    name: str
    value: Any
    editable: bool

    @property
    def type(self) -> str | None:
        return value_type(self.value)

    @property
    def text(self) -> str:
        """The value as a person reads it; structured values as indented JSON."""
        if isinstance(self.value, str):
            return self.value
        if self.type == "list of text":
            return "\n".join(self.value)
        return json.dumps(self.value, ensure_ascii=False, indent=2)

    @property
    def multiline(self) -> bool:
        return self.type == "list of text" or "\n" in self.text or len(self.text) > 80

    @property
    def form_name(self) -> str:
        return FIELD_PREFIX + self.name


@dataclass(frozen=True, slots=True)
class ActionView:
    """An action as one card shows it: the proposed one, or the one decided on."""

    kind: str
    fields: tuple[ActionField, ...]
    hash: str
    edited_from: str | None = None

    @property
    def fingerprint(self) -> str:
        return short_hash(self.hash)

    @property
    def edited_from_fingerprint(self) -> str | None:
        return short_hash(self.edited_from) if self.edited_from else None

    @property
    def editable(self) -> tuple[ActionField, ...]:
        return tuple(f for f in self.fields if f.editable)


def action_view(
    action: ProposedAction | None, status: str, response: dict[str, Any] | None
) -> ActionView | None:
    """The exact action of a card: as decided once answered, as proposed until then."""
    if action is None:
        return None
    if status == "resolved" and response and "actionHash" in response:
        return decided(action, response)
    return proposed(action)


def proposed(action: ProposedAction) -> ActionView:
    return ActionView(
        kind=action.kind,
        fields=tuple(
            ActionField(name, value, name in action.editable)
            for name, value in action.fields.items()
        ),
        hash=action.hash,
    )


def decided(action: ProposedAction, response: dict[str, Any]) -> ActionView:
    """The action a recorded decision approved (the proposed one when it was not edited)."""
    final = response.get("action") or {}
    fields: dict[str, Any] = final.get("fields") or action.fields
    return ActionView(
        kind=action.kind,
        fields=tuple(ActionField(name, value, False) for name, value in fields.items()),
        hash=str(response.get("actionHash") or action.hash),
        edited_from=response.get("editedFrom"),
    )


def edits_from_form(action: ProposedAction, form: Any) -> dict[str, Any]:
    """New values of the editable fields the form sent, in the type each field holds.

    A value that does not parse is passed on as text, so the core's check names the field
    and the type it must keep rather than this page guessing.
    """
    edits: dict[str, Any] = {}
    for name in action.editable:
        raw = form.get(FIELD_PREFIX + name)
        if raw is None:
            continue
        raw = raw.replace("\r\n", "\n")
        edits[name] = _parsed(value_type(action.fields[name]), raw)
    return edits


def _parsed(kind: str | None, raw: str) -> Any:
    if kind == "list of text":
        return [line for line in raw.split("\n") if line.strip()]
    if kind == "boolean":
        return {"true": True, "false": False}.get(raw, raw)
    if kind == "number":
        text = raw.strip()
        if _INTEGER.match(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            return raw
        return number if math.isfinite(number) else raw
    return raw
