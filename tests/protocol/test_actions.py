"""The proposed action's hash and the edits an answer may make to it."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from hub.protocol.actions import ProposedAction, action_hash, short_hash
from hub.protocol.interactions import (
    ACTION_CHANGED,
    InteractionCard,
    ResponseError,
    approval_card,
    validate_response,
)

MIGRATION = ProposedAction(
    kind="db.migration",
    fields={"database": "prod-eu", "statements": ["ALTER TABLE users ADD plan text"], "batch": 500},
    editable=["statements", "batch"],
)


def card(action: ProposedAction = MIGRATION) -> InteractionCard:
    return approval_card("Run the migration?", risk="high", action=action)


def answer(**extra: Any) -> dict[str, Any]:
    return {"optionId": "approve", "actionHash": MIGRATION.hash, **extra}


def test_the_hash_is_sha256_of_the_canonical_json() -> None:
    canonical = '{"fields":{"a":true,"b":[1,"é"]},"kind":"k"}'
    expected = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert action_hash("k", {"b": [1, "é"], "a": True}) == expected
    # Key order and spacing do not matter; values do.
    assert action_hash("k", {"a": True, "b": [1, "é"]}) == expected
    assert action_hash("k", {"a": True, "b": [1, "e"]}) != expected
    assert short_hash(expected) == expected.removeprefix("sha256:")[:12]


def test_an_unedited_approval_is_bound_to_the_shown_action() -> None:
    decided = validate_response(card(), answer(comment="go"))
    assert decided == {
        "optionId": "approve",
        "actionHash": MIGRATION.hash,
        "action": {"kind": "db.migration", "fields": MIGRATION.fields},
        "comment": "go",
    }


def test_an_edit_records_the_new_hash_and_the_original() -> None:
    decided = validate_response(card(), answer(action={"batch": 100}))
    fields = {**MIGRATION.fields, "batch": 100}
    assert decided["action"] == {"kind": "db.migration", "fields": fields}
    assert decided["actionHash"] == action_hash("db.migration", fields)
    assert decided["editedFrom"] == MIGRATION.hash
    # A recorded decision validates again to itself (the log can be replayed).
    assert validate_response(card(), decided) == decided


def test_setting_a_field_to_its_value_is_no_edit() -> None:
    decided = validate_response(card(), answer(action={"batch": 500, "database": "prod-eu"}))
    assert decided["actionHash"] == MIGRATION.hash
    assert "editedFrom" not in decided
    assert validate_response(card(), decided) == decided


@pytest.mark.parametrize(
    ("edits", "says"),
    [
        ({"database": "prod-us"}, "Field 'database' cannot be edited."),
        ({"batch": "100"}, "Field 'batch' must stay number."),
        ({"batch": True}, "Field 'batch' must stay number."),
        ({"statements": "DROP TABLE users"}, "Field 'statements' must stay list of text."),
        ({"force": True}, "The action has no field 'force'."),
        (["batch"], "'action' must be an object"),
    ],
)
def test_edits_the_action_does_not_allow_are_refused(edits: Any, says: str) -> None:
    with pytest.raises(ResponseError, match=says) as refused:
        validate_response(card(), answer(action=edits))
    assert refused.value.code == "invalid_action_edit"


def test_a_stale_or_missing_hash_is_refused() -> None:
    with pytest.raises(ResponseError, match="changed since you saw it") as stale:
        validate_response(card(), answer(actionHash=action_hash("db.migration", {})))
    assert stale.value.code == ACTION_CHANGED
    with pytest.raises(ResponseError, match="send 'actionHash'") as missing:
        validate_response(card(), {"optionId": "reject"})
    assert missing.value.code == "invalid_response"


def test_a_recorded_decision_with_a_wrong_final_hash_is_refused() -> None:
    decided = validate_response(card(), answer(action={"batch": 100}))
    with pytest.raises(ResponseError, match="hash of the edited action"):
        validate_response(card(), {**decided, "actionHash": MIGRATION.hash})
    dropped = {"kind": "db.migration", "fields": {"batch": 100}}
    with pytest.raises(ResponseError, match="keep its fields"):
        validate_response(card(), {**decided, "action": dropped})


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ({"kind": "x", "fields": {"a": 1}, "editable": ["b"]}, "is not one of the action's"),
        ({"kind": "x", "fields": {"a": {"b": 1}}, "editable": ["a"]}, "must hold text"),
        ({"kind": "x", "fields": {"a": "y" * 30_000}}, "at most 20000 bytes"),
        ({"kind": "", "fields": {}}, "at least 1 character"),
    ],
)
def test_a_proposed_action_is_checked_when_asked(action: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        ProposedAction.model_validate(action)


def test_only_approval_and_review_cards_propose_actions() -> None:
    with pytest.raises(ValueError, match="only an approval or review card"):
        InteractionCard.model_validate(
            {"type": "input", "title": "Name?", "action": {"kind": "x", "fields": {}}}
        )
