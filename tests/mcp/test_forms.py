"""Every card, as the form the person at the agent's terminal is shown, is a form the MCP
specification allows, on each revision it is sent on; the answers are held to the card.

The checks are the official SDK's own: its per-revision wire validators
(``mcp_types.methods``: an ``elicitation/create`` request on 2025-06-18 and 2025-11-25, a
``tools/call`` input-required result carrying the form on 2026-07-28), and, for each field,
the ``PrimitiveSchemaDefinition`` of the revision's schema, the gate the SDK's own
``ctx.elicit`` puts every field through (the wire validators take any object there).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition as Field2025
from mcp_types._v2026_07_28 import PrimitiveSchemaDefinition as Field2026
from mcp_types.methods import parse_server_request, validate_server_result
from pydantic import TypeAdapter

from hub.protocol.interactions import InteractionCard, ResponseError
from plugins.mcp_server.forms import batch_form, card_form, note_for

REVISIONS = ["2025-06-18", "2025-11-25", "2026-07-28"]
OPTIONS = [
    {"id": "eu", "label": "Europe"},
    {"id": "us", "label": "US"},
    {"id": "ap", "label": "Asia"},
]

CARDS: dict[str, dict[str, Any]] = {
    "approval": {"type": "approval", "title": "Deploy v2", "risk": "high", "impact": "All users"},
    "exact action": {
        "type": "approval",
        "title": "Migrate",
        "action": {"kind": "shell.command", "fields": {"command": "make migrate"}},
    },
    "review": {"type": "review", "title": "Review the patch", "content": "diff"},
    "choice": {"type": "choice", "title": "Region?", "options": OPTIONS},
    "multiple choice": {
        "type": "choice",
        "title": "Regions?",
        "options": OPTIONS,
        "multiple": True,
        "maxSelections": 2,
    },
    "email input": {"type": "input", "title": "Who?", "input": {"format": "email"}},
    "pattern input": {
        "type": "input",
        "title": "Version?",
        "input": {"format": "pattern", "pattern": r"\d+\.\d+"},
    },
}


def card(kind: str) -> InteractionCard:
    return InteractionCard.model_validate(CARDS[kind])


FIELDS = {"2025-06-18": Field2025, "2025-11-25": Field2025, "2026-07-28": Field2026}


def sent_as(revision: str, message: str, schema: dict[str, Any]) -> None:
    """Validate the form as the wire of ``revision`` carries it, field by field too."""
    field = TypeAdapter(FIELDS[revision])
    assert schema["type"] == "object" and schema["properties"]
    for name, prop in schema["properties"].items():
        field.validate_python(prop)
        if revision == "2025-06-18":  # titled (oneOf) and multi-select fields came later
            assert "oneOf" not in prop and prop["type"] != "array", name
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    if revision == "2026-07-28":
        result = {
            "resultType": "input_required",
            "inputRequests": {"answer-1": {"method": "elicitation/create", "params": params}},
            "requestState": "opaque",
        }
        validate_server_result("tools/call", revision, result)
    else:
        if revision == "2025-06-18":
            params.pop("mode")
        parse_server_request("elicitation/create", revision, params)


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", list(CARDS))
def test_each_card_is_a_valid_form_on_each_revision(kind: str, revision: str) -> None:
    form = card_form(card(kind), revision)
    if kind == "multiple choice" and revision == "2025-06-18":
        assert form is None  # no multi-select fields before 2025-11-25: the hub answers it
        return
    assert form is not None
    sent_as(revision, form.message, form.schema)
    assert form.message.startswith(card(kind).title)


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_batch_is_one_valid_form(revision: str) -> None:
    cards = [card("approval"), card("exact action")]
    form = batch_form(cards, revision)
    assert form is not None
    sent_as(revision, form.message, form.schema)
    answers = form.answers({"item1_choice": "approve", "item2_choice": "reject"})
    assert [a["optionId"] for a in answers] == ["approve", "reject"]


def test_answers_are_held_to_the_card_as_on_every_surface() -> None:
    approval = card_form(card("exact action"), "2025-11-25")
    assert approval is not None
    (approved,) = approval.answers({"choice": "approve", "comment": "ok"})
    assert approved["actionHash"] == card("exact action").action.hash  # type: ignore[union-attr]
    assert note_for(card("exact action"), approved) == "Approve: ok"

    regions = card_form(card("multiple choice"), "2025-11-25")
    assert regions is not None
    assert regions.answers({"choices": ["ap", "eu"]}) == [{"optionIds": ["eu", "ap"]}]
    for wrong in ({"choices": ["eu", "us", "ap"]}, {"choices": ["xx"]}, {}):
        with pytest.raises(ResponseError):
            regions.answers(wrong)

    version = card_form(card("pattern input"), "2026-07-28")
    assert version is not None
    assert version.answers({"text": " 2.4 "}) == [{"text": "2.4"}]
    with pytest.raises(ResponseError, match="pattern"):
        version.answers({"text": "soon"})


def test_a_secret_or_a_card_for_named_people_is_never_a_form() -> None:
    secret = InteractionCard.model_validate(
        {"type": "input", "title": "Password?", "input": {"sensitive": True}}
    )
    named = InteractionCard.model_validate(
        {**CARDS["approval"], "policy": {"approvers": ["ada@example.com"]}}
    )
    quorum = InteractionCard.model_validate(
        {**CARDS["approval"], "policy": {"mode": "quorum", "required": 2}}
    )
    for revision in REVISIONS:
        assert card_form(secret, revision) is None
        assert card_form(named, revision) is None
        assert card_form(quorum, revision) is None
        assert batch_form([card("approval"), named], revision) is None
