"""The workspace's event log after a sequence, page by page."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.log.epochs import resume
from hub.core.log.events import MAX_SEQUENCE, events_after
from hub.core.store.models import Workspace
from hub.core.work.sensitive_answers import envelopes_for_people
from hub.host.identity import member_of
from hub.web.api.answers import EventPage
from hub.web.api.base import ApiModel, query_args

blueprint = Blueprint("api_events", __name__, url_prefix="/api/v1")


class EventsQuery(ApiModel):
    after: int = Field(
        0, ge=0, le=MAX_SEQUENCE, description="Return events with a greater sequence."
    )
    limit: int = Field(500, ge=1, le=1000)
    epoch: str | None = Field(
        None,
        max_length=40,
        description="The epoch you stored with ``after``: a sequence beyond the log's end in "
        "the log's own epoch means the log lost events, and starts a new epoch.",
    )


@blueprint.get("/workspaces/<ws>/events")
@document_response(EventPage)
@query_args(EventsQuery)
async def events(ws: str, query: EventsQuery) -> dict[str, Any]:
    """Events after ``after``, in order. ``epoch`` names the log: if it differs from the one
    you stored with your sequence, start again from 0. ``hasMore``: ask again after the
    last one. Send that ``epoch`` too: a sequence beyond the log's end in the log's own
    epoch means the log lost events, and starts a new epoch, so that you and every other
    client of the old one start again instead of skipping the events that reuse them. The
    answer to a sensitive input reads ``{"hidden": true}``: only the agent that asked
    receives its text."""
    caller, _ = await member_of(ws)
    page = await events_after(ws, query.after, limit=query.limit)
    workspace = await Workspace.get(id=ws)  # read after the page: lastSequence covers it
    if query.epoch:
        client = f"user {caller.user.id}"
        workspace = (await resume(workspace, query.epoch, query.after, client=client)).workspace
    return {
        "events": await envelopes_for_people(ws, page),
        "epoch": workspace.epoch,
        "lastSequence": int(workspace.last_sequence),
        "hasMore": bool(page) and int(page[-1].sequence) < int(workspace.last_sequence),
    }
