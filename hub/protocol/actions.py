"""The exact action an approval is about, its hash, and the edits a person may make to it.

An agent that wants to do something specific ("run this migration on that database")
sends it as a ``ProposedAction``: a ``kind`` and the ``fields`` that say exactly what will
be done. Every surface shows those fields as they are, and every decision carries the
``action_hash`` of what the person saw, so a decision cannot be replayed onto a different
action. Fields the agent lists as ``editable`` may be changed by the person before they
approve (same type, nothing else); the decision then carries the hash of the edited
action and, in ``editedFrom``, the hash of the one that was proposed.

The hash is over a canonical JSON form (sorted keys, no spaces, UTF-8), so the agent, the
hub and any other tool compute the same value from the same action.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import Field, model_validator

from hub.protocol.base import WireModel

HASH_PREFIX = "sha256:"
MAX_ACTION_BYTES = 20_000  # canonical JSON of kind + fields: enough for a command or a query
MAX_FIELD_NAME_LENGTH = 100
EDIT_REFUSED = "invalid_action_edit"


def canonical_json(kind: str, fields: dict[str, Any]) -> str:
    return json.dumps(
        {"kind": kind, "fields": fields},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def action_hash(kind: str, fields: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the action's canonical JSON; the same everywhere it is computed."""
    digest = hashlib.sha256(canonical_json(kind, fields).encode("utf-8")).hexdigest()
    return HASH_PREFIX + digest


def short_hash(full: str) -> str:
    """The fingerprint people compare by eye: the first 12 hex digits."""
    return full.removeprefix(HASH_PREFIX)[:12]


def value_type(value: Any) -> str | None:
    """The kind of value an editable field holds, or None if it cannot be edited.

    Numbers are one type (an edit may turn 3 into 3.5) but never a boolean, which Python
    counts as a number and a person does not.
    """
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "list of text"
    return None


class ActionEditError(ValueError):
    """An edit the action does not allow; the message names the field and what would do."""

    code = EDIT_REFUSED


class ProposedAction(WireModel):
    """What exactly will be done if the person approves."""

    kind: str = Field(min_length=1, max_length=100)  # e.g. "shell.command", "db.migration"
    fields: dict[str, Any] = Field(default_factory=dict)
    editable: list[str] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _bounded_and_editable(self) -> ProposedAction:
        for name in self.fields:
            if not 1 <= len(name) <= MAX_FIELD_NAME_LENGTH:
                raise ValueError(f"field names must be 1 to {MAX_FIELD_NAME_LENGTH} characters")
        try:
            size = len(canonical_json(self.kind, self.fields).encode("utf-8"))
        except (TypeError, ValueError):
            raise ValueError("the action's fields must be plain JSON values") from None
        if size > MAX_ACTION_BYTES:
            raise ValueError(f"the action must be at most {MAX_ACTION_BYTES} bytes as JSON")
        if len(set(self.editable)) != len(self.editable):
            raise ValueError("each editable field may be listed once")
        for name in self.editable:
            if name not in self.fields:
                raise ValueError(f"editable field {name!r} is not one of the action's fields")
            if value_type(self.fields[name]) is None:
                raise ValueError(
                    f"editable field {name!r} must hold text, a number, a boolean or a list of text"
                )
        return self

    @property
    def hash(self) -> str:
        return action_hash(self.kind, self.fields)

    def edited(self, edits: dict[str, Any]) -> ProposedAction:
        """This action with ``edits`` applied, or ``ActionEditError`` saying why not.

        An edit that sets a field to the value it already has changes nothing.
        """
        if not isinstance(edits, dict):
            raise ActionEditError("'action' must be an object of field names and new values.")
        fields = dict(self.fields)
        for name, value in edits.items():
            if name not in self.fields:
                raise ActionEditError(f"The action has no field {name!r}.")
            if value == self.fields[name] and value_type(value) == value_type(fields[name]):
                continue
            if name not in self.editable:
                raise ActionEditError(f"Field {name!r} cannot be edited.")
            expected = value_type(self.fields[name])
            if value_type(value) != expected:
                raise ActionEditError(f"Field {name!r} must stay {expected}.")
            fields[name] = value
        try:
            return ProposedAction(kind=self.kind, fields=fields, editable=list(self.editable))
        except ValueError as error:
            raise ActionEditError(f"The edited action is not valid: {error}") from None

    def summary(self) -> dict[str, Any]:
        """What a decision records of the action: its kind and exact fields."""
        return {"kind": self.kind, "fields": dict(self.fields)}
