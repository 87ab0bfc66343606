"""Several cards of one task answered in one request (``hub.core.work.batch_answers``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint

from hub.core.work.batch_answers import MAX_BATCH_ITEMS, BatchItem, respond_to_batch
from hub.host.identity import member_of
from hub.web.api.base import ApiModel, idempotency_key, json_body

blueprint = Blueprint("api_decisions", __name__, url_prefix="/api/v1")


class Decision(ApiModel):
    interaction_id: str = Field(min_length=1, max_length=40)
    response: dict[str, Any] = Field(
        description="The same answer `POST .../interactions/{id}/respond` takes, e.g. "
        '`{"optionId": "approve"}`.'
    )


class Decisions(ApiModel):
    items: list[Decision] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
    via: str | None = Field(
        None,
        max_length=40,
        description="As for a single answer: `notebook` for a token client that is one. "
        "Defaults to `api` (token) or `web` (session).",
    )


@blueprint.post("/workspaces/<ws>/tasks/<task_id>/decisions")
@json_body(Decisions)
async def decide(ws: str, task_id: str, body: Decisions) -> dict[str, Any]:
    """Answer several cards of the task together: ``{batchId, taskId, items}``, one outcome
    per item in order — ``decided``, ``already_decided`` (someone answered first; it says
    who, via what and when), ``closed`` (expired or withdrawn) or ``refused``. All items are
    checked first: if any names an unknown card, a card of another task or an answer the
    card does not offer, it is ``422 invalid_batch`` (``details.items`` says which and why)
    and nothing is decided. Each answer reaches the agent as its own
    ``interaction.resolved``, carrying the ``batchId``."""
    caller, _ = await member_of(ws, write=True)
    return await respond_to_batch(
        ws,
        task_id,
        [BatchItem(item.interaction_id, item.response) for item in body.items],
        responder=caller.actor,
        via=caller.answering_via(body.via),
        idempotency_key=idempotency_key(),
    )
