"""What an adapter may act on once a person decided: the approved action, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from hub.protocol.actions import ProposedAction, action_hash
from hub.protocol.interactions import approval_card, validate_response
from hub.sdk import ActionMismatch, NotApproved, Resolution

COMMAND = ProposedAction(
    kind="shell.command", fields={"command": "make deploy", "host": "web-1"}, editable=["command"]
)


def decision(response: dict[str, Any]) -> Resolution:
    card = approval_card("Deploy?", action=COMMAND)
    return Resolution.from_payload(
        {
            "interactionId": "int_1",
            "response": validate_response(card, response),
            "respondedBy": "user:u1",
            "respondedAt": "2026-11-29T12:00:00Z",
            "via": "web",
        }
    )


def test_an_unedited_approval_gives_the_proposed_fields() -> None:
    answer = decision({"optionId": "approve", "actionHash": COMMAND.hash})
    assert answer.approved_action(COMMAND) == COMMAND.fields
    assert not answer.edited and answer.action_hash == COMMAND.hash


def test_an_edit_the_action_allows_gives_the_edited_fields() -> None:
    edit = {"command": "make deploy-canary"}
    answer = decision({"optionId": "approve", "actionHash": COMMAND.hash, "action": edit})
    assert answer.approved_action(COMMAND) == {**COMMAND.fields, **edit}
    assert answer.edited and answer.edited_from == COMMAND.hash


def test_another_action_is_refused() -> None:
    answer = decision({"optionId": "approve", "actionHash": COMMAND.hash})
    other_host = ProposedAction(kind="shell.command", fields={**COMMAND.fields, "host": "web-2"})
    with pytest.raises(ActionMismatch, match="request approval for this action again"):
        answer.approved_action(other_host)


def test_a_decision_whose_hash_does_not_match_its_action_is_refused() -> None:
    answer = decision({"optionId": "approve", "actionHash": COMMAND.hash})
    forged_fields = {**COMMAND.fields, "host": "db-1"}
    forged = Resolution(
        interaction_id=answer.interaction_id,
        response={**answer.response, "action": {"kind": "shell.command", "fields": forged_fields}},
        responded_by=answer.responded_by,
        responded_at=answer.responded_at,
        via=answer.via,
    )
    with pytest.raises(ActionMismatch):
        forged.approved_action(COMMAND)
    # Even with a matching hash, an "edit" of a field that is not editable is no edit.
    rehashed = {
        **forged.response,
        "actionHash": action_hash("shell.command", forged_fields),
        "editedFrom": COMMAND.hash,
    }
    with pytest.raises(ActionMismatch):
        Resolution("int_1", rehashed, "user:u1", answer.responded_at, "web").approved_action(
            COMMAND
        )


def test_a_no_is_not_an_action_to_take() -> None:
    answer = decision({"optionId": "reject", "actionHash": COMMAND.hash})
    with pytest.raises(NotApproved):
        answer.approved_action(COMMAND)
