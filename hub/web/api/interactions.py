"""Interaction cards: read one, answer it."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.work.interactions import interaction_detail, respond_to_interaction
from hub.host.identity import member_of
from hub.protocol.interactions import MAX_COMMENT_LENGTH, OptionId
from hub.web.api.answers import InteractionAnswer
from hub.web.api.base import ApiModel, idempotency_key, json_body

blueprint = Blueprint("api_interactions", __name__, url_prefix="/api/v1")


class Answer(ApiModel):
    """approval, review: ``{optionId, comment?}``, plus ``actionHash`` (and ``action``, the
    edited fields) when the card proposes an action; choice: ``{optionId}`` or, when the card
    allows several, ``{optionIds}``; input: ``{text}``, checked against the card's format."""

    option_id: OptionId | None = None
    option_ids: list[OptionId] | None = Field(None, max_length=20)
    text: str | None = Field(None, max_length=100_000)
    comment: str | None = Field(None, max_length=MAX_COMMENT_LENGTH)
    action_hash: str | None = Field(
        None,
        max_length=80,
        description="The hash of the proposed action as it was shown (`sha256:<hex>`); a "
        "different one is refused with 409 `action_changed`.",
    )
    action: dict[str, Any] | None = Field(
        None, description="New values of the action's editable fields, by field name."
    )
    via: str | None = Field(
        None,
        max_length=40,
        description="The surface the answer was given on, for a token client that is not "
        "a plain API script: `notebook`. Defaults to `api` (token) or `web` (session).",
    )


@blueprint.get("/workspaces/<ws>/interactions/<interaction_id>")
@document_response(InteractionAnswer)
async def interaction(ws: str, interaction_id: str) -> dict[str, Any]:
    """The card with its status and, once answered, the answer and who gave it, how, when.
    The text of a sensitive input is never shown: its ``response`` is ``{"hidden": true}``."""
    await member_of(ws)
    return await interaction_detail(ws, interaction_id)


@blueprint.post("/workspaces/<ws>/interactions/<interaction_id>/respond")
@document_response(InteractionAnswer)
@json_body(Answer)
async def respond(ws: str, interaction_id: str, body: Answer) -> dict[str, Any]:
    """Answer the card. 403 ``not_allowed_to_answer`` for a viewer; 409 ``already_decided``
    if someone answered first (the error's details say who, via what and when); 410 if it
    expired."""
    caller, _ = await member_of(ws)  # who may answer is the core's to decide
    await respond_to_interaction(
        ws,
        interaction_id,
        body.model_dump(by_alias=True, exclude_none=True, exclude={"via"}),
        responder=caller.actor,
        via=caller.answering_via(body.via),
        idempotency_key=idempotency_key(),
    )
    return await interaction_detail(ws, interaction_id)
