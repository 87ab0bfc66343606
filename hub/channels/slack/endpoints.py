"""The HTTP endpoints Slack posts to when the hub has a public URL (no app token).

* ``POST /slack/interactivity``: button presses (``block_actions``) and modal submissions
  (``view_submission``), form-encoded as ``payload=<JSON>``.
* ``POST /slack/events``: the Events API (a direct message to the bot links an account),
  JSON, starting with Slack's ``url_verification`` challenge.

Every request must carry Slack's ``v0`` signature, at most five minutes old, and never seen
before (``signatures.RequestCheck``); anything else is refused with 401 and changes
nothing. A press is acknowledged at once and handled after, as Slack wants an answer
within 3 s; a modal's submission is answered with what the modal shows next.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from quart import Blueprint, request

from hub.channels.slack.inbound import Inbound
from hub.channels.slack.signatures import RequestCheck, SeenOnce
from hub.core.errors import InvalidInput, Unauthorized

INTERACTIVITY_PATH = "/slack/interactivity"
EVENTS_PATH = "/slack/events"
MAX_BODY = 1024 * 1024


def slack_blueprint(check: RequestCheck, inbound: Inbound) -> Blueprint:
    blueprint = Blueprint("slack_requests", __name__)
    seen_events = SeenOnce()

    async def signed_body() -> bytes:
        body = await request.get_data(cache=False)
        if len(body) > MAX_BODY or not check.accepts(body, request.headers):
            raise Unauthorized(
                "This request does not carry a valid, recent Slack signature.",
                code="slack_signature_invalid",
                hint="Set LINEUP_SLACK_SIGNING_SECRET to the signing secret on the Slack "
                "app's Basic Information page; Slack's requests are refused otherwise.",
            )
        return body

    @blueprint.post(INTERACTIVITY_PATH)
    async def interactivity() -> Any:
        body = await signed_body()
        payload = _payload(body)
        if inbound.answers_at_once(payload):
            answer = await inbound.answer(payload)
            return (answer, 200) if answer else ("", 200)
        inbound.interaction_later(payload)
        return "", 200

    @blueprint.post(EVENTS_PATH)
    async def events() -> Any:
        body = await signed_body()
        data = _json(body)
        if data.get("type") == "url_verification":
            return {"challenge": str(data.get("challenge") or "")}, 200
        # Slack sends an event again (X-Slack-Retry-Num) when it missed our answer.
        if data.get("type") == "event_callback" and seen_events.first_time(
            str(data.get("event_id") or "")
        ):
            inbound.event_later(data)
        return "", 200

    return blueprint


def _payload(body: bytes) -> dict[str, Any]:
    values = parse_qs(body.decode("utf-8", "replace")).get("payload") or [""]
    return _json(values[0].encode())


def _json(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise InvalidInput("Slack's request carries no JSON object.", code="invalid_input")
    return data
