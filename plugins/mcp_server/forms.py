"""A card as the form an MCP client shows the person at the agent's terminal.

MCP elicitation lets a server ask the client's user directly: a form of flat, typed fields
(form mode), or a link to a page of the server's own (URL mode). The card a person can
answer on the web, by email or in Telegram becomes such a form here, so whoever sits at the
agent's terminal can answer the same card, and the answer is checked against the card by
the same rule every surface uses (``validate_response``).

Not every card is asked at the terminal:

* A card with named approvers or a quorum wants those people: an anonymous answer at the
  terminal would step around the policy, so it waits for them in the hub.
* A sensitive input never goes into a form, whose value would pass through the client (and
  its logs, and often the model's context). It is asked in URL mode instead: the client
  opens the card's page on the hub, where the person types the value.
* A multiple choice needs the multi-select fields of 2025-11-25; an older client answers
  it in the hub.

A proposed action's editable fields of text, a number or a yes/no are fields of the form,
holding the proposed value as their default (a default needs 2025-11-25; an older client
approves the action as proposed). The person changes what they would; the hub binds the
edit to the card's action as on every surface, so the agent is told the action it may
take, and a "no" never carries edits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.protocol.actions import ProposedAction, value_type
from hub.protocol.interactions import (
    MAX_COMMENT_LENGTH,
    InputFormat,
    InteractionCard,
    InteractionType,
    declines,
    validate_response,
)

# The first revision with titled (oneOf) and multi-select enum fields (SEP-1330).
TITLED_ENUMS_FROM = "2025-11-25"
_STRING_FORMATS = {InputFormat.EMAIL: "email", InputFormat.URL: "uri"}
# The types of an editable field a form field can hold (a list of text has no such field).
_EDIT_TYPES = {"text": "string", "number": "number", "boolean": "boolean"}


@dataclass(frozen=True)
class Form:
    """The fields asked for one or more cards, and how to read the person's answer."""

    message: str
    schema: dict[str, Any]
    cards: tuple[InteractionCard, ...]

    def answers(self, content: dict[str, Any] | None) -> list[dict[str, Any]]:
        """The answer to each card from the form's ``content``; ``ResponseError`` (from
        ``validate_response``) says what does not fit."""
        content = content or {}
        return [
            validate_response(card, _response(card, content, _prefix(i, self.cards)))
            for i, card in enumerate(self.cards)
        ]


def answerable_at_terminal(card: InteractionCard) -> bool:
    """Whether the person at the terminal may answer ``card`` (see the module's notes)."""
    policy = card.policy
    if policy is not None and (policy.approvers or policy.mode == "quorum"):
        return False
    return not (card.input is not None and card.input.sensitive)


def card_form(card: InteractionCard, protocol_version: str) -> Form | None:
    """The form for ``card``, or None when it is not asked at the terminal in a form."""
    if not answerable_at_terminal(card):
        return None
    if card.multiple and protocol_version < TITLED_ENUMS_FROM:
        return None
    fields, required = _fields(card, "", protocol_version)
    return Form(_message(card), _schema(fields, required), (card,))


def batch_form(cards: list[InteractionCard], protocol_version: str) -> Form | None:
    """One form for several approvals: a decision per card, all on one screen."""
    if not all(answerable_at_terminal(c) for c in cards):
        return None
    fields: dict[str, Any] = {}
    required: list[str] = []
    for index, card in enumerate(cards):
        more, needed = _fields(card, _prefix(index, cards), protocol_version, numbered=index + 1)
        fields.update(more)
        required += needed
    lines = [f"{i}. {_message(card)}" for i, card in enumerate(cards, start=1)]
    message = f"{len(cards)} approvals, decide each:\n\n" + "\n\n".join(lines)
    return Form(message, _schema(fields, required), tuple(cards))


def page_message(card: InteractionCard) -> str:
    """What the client says when it offers to open the card's page (URL mode)."""
    return (
        f"{_message(card)}\n\nThis asks for a secret: type it on the hub's page, not here, "
        "so it never passes through this client."
    )


def note_for(card: InteractionCard, answer: dict[str, Any]) -> str:
    """What the hub shows beside the withdrawn card: the answer given at the terminal."""
    if "optionIds" in answer:
        picked = [o.label for o in card.options if o.id in answer["optionIds"]]
        return "Picked: " + ", ".join(picked)
    if "optionId" in answer:
        option = card.option(answer["optionId"])
        said = option.label if option else answer["optionId"]
        if "editedFrom" in answer:
            said += " (edited)"
        return f"{said}: {answer['comment']}" if answer.get("comment") else said
    return "Answered: " + str(answer.get("text", ""))


def _prefix(index: int, cards: tuple[InteractionCard, ...] | list[InteractionCard]) -> str:
    return f"item{index + 1}_" if len(cards) > 1 else ""


def _message(card: InteractionCard) -> str:
    parts = [card.title]
    if card.risk is not None:
        parts.append(f"Risk: {card.risk.value}")
    parts += [p for p in (card.description, card.impact) if p]
    if card.action is not None:
        fields = "; ".join(f"{k}: {v}" for k, v in card.action.fields.items())
        parts.append(f"Exactly: {card.action.kind} ({fields})")
    if card.content_url:
        parts.append(f"To review: {card.content_url}")
    return "\n".join(parts)


def _schema(fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": fields, "required": required}


def _fields(
    card: InteractionCard, prefix: str, version: str, numbered: int | None = None
) -> tuple[dict[str, Any], list[str]]:
    title = f"{numbered}. {card.title}" if numbered else card.title
    if card.type is InteractionType.INPUT:
        spec = card.input
        assert spec is not None
        text: dict[str, Any] = {"type": "string", "title": title, "maxLength": spec.max_length}
        if spec.min_length:
            text["minLength"] = spec.min_length
        if spec.format in _STRING_FORMATS:
            text["format"] = _STRING_FORMATS[spec.format]
        if spec.placeholder or spec.format is InputFormat.PATTERN:
            text["description"] = spec.placeholder or f"Must match {spec.pattern}"
        return {f"{prefix}text": text}, [f"{prefix}text"]
    if card.multiple:
        upper = card.max_selections or len(card.options)
        choices = {
            "type": "array",
            "title": title,
            "minItems": card.min_selections,
            "maxItems": upper,
            "items": {"anyOf": [{"const": o.id, "title": o.label} for o in card.options]},
        }
        return {f"{prefix}choices": choices}, [f"{prefix}choices"]
    fields = {f"{prefix}choice": _single_select(card, title, version)}
    if card.action is not None and version >= TITLED_ENUMS_FROM:
        for name in _editable_here(card.action):
            value = card.action.fields[name]
            fields[f"{prefix}edit_{name}"] = {
                "type": _EDIT_TYPES[value_type(value) or ""],
                "title": f"Change {name}" if not numbered else f"{numbered}. Change {name}",
                "description": f"Proposed: {value}. Change it to approve another value.",
                "default": value,
            }
    if card.type is not InteractionType.CHOICE:
        fields[f"{prefix}comment"] = {
            "type": "string",
            "title": "Comment" if not numbered else f"{numbered}. Comment",
            "description": "Optional: what to tell the agent with your answer.",
            "maxLength": MAX_COMMENT_LENGTH,
        }
    return fields, [f"{prefix}choice"]


def _single_select(card: InteractionCard, title: str, version: str) -> dict[str, Any]:
    if version >= TITLED_ENUMS_FROM:
        one_of = [{"const": o.id, "title": o.label} for o in card.options]
        return {"type": "string", "title": title, "oneOf": one_of}
    # 2025-06-18 knows only the enum with display names.
    return {
        "type": "string",
        "title": title,
        "enum": [o.id for o in card.options],
        "enumNames": [o.label for o in card.options],
    }


def _response(card: InteractionCard, content: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The answer payload the hub takes for ``card``, from the form's fields."""
    if card.type is InteractionType.INPUT:
        return {"text": content.get(f"{prefix}text")}
    if card.multiple:
        return {"optionIds": content.get(f"{prefix}choices")}
    response: dict[str, Any] = {"optionId": content.get(f"{prefix}choice")}
    comment = content.get(f"{prefix}comment")
    if isinstance(comment, str) and comment.strip():
        response["comment"] = comment.strip()
    if card.action is not None:
        response["actionHash"] = card.action.hash  # the action the form showed
        edits = {
            name: content[f"{prefix}edit_{name}"]
            for name in _editable_here(card.action)
            if content.get(f"{prefix}edit_{name}", card.action.fields[name])
            != card.action.fields[name]
        }
        option = card.option(str(response["optionId"]))
        if edits and option is not None and not declines(option.id, option.style):
            response["action"] = edits
    return response


def _editable_here(action: ProposedAction) -> list[str]:
    """The action's editable fields the form can hold."""
    return [n for n in action.editable if value_type(action.fields[n]) in _EDIT_TYPES]
