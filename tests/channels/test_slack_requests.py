"""Slack posting to the hub (no app token): only requests bearing Slack's `v0` signature, at
most five minutes old and never seen before, are taken; anything else changes nothing."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from hub.core.store.models import Event, Interaction, InteractionStatus
from hub.core.store.notification_models import Notification
from tests.channels.conftest import Hub, eventually
from tests.channels.slack_peer import (
    BOT_TOKEN,
    SIGNING_SECRET,
    SlackPeer,
    interactivity_body,
)

ADA = "U0ADA"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def http_mode(slack: SlackPeer) -> dict[str, Any]:
    return {
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": slack.api_url,
    }


def through(hub: Hub, slack: SlackPeer) -> None:
    """Slack's posts reach this hub's endpoints (its test client: the same app, no port)."""

    async def post(path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        response = await hub.client.post(path, data=body, headers=headers)
        return response.status_code, await response.get_data(as_text=True)

    slack.post_to_hub = post


async def decisions(interaction_id: str) -> int:
    events = await Event.filter(type="interaction.resolved")
    return sum(1 for e in events if e.payload.get("interactionId") == interaction_id)


async def test_the_events_endpoint_answers_slacks_challenge(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**http_mode(slack)) as hub:
        body = json.dumps({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV"})
        headers = {"Content-Type": "application/json", **slack.sign(body.encode())}
        answer = await hub.client.post("/slack/events", data=body.encode(), headers=headers)
        assert answer.status_code == 200
        assert (await answer.get_json()) == {"challenge": "3eZbrw1aBm2rZgRNFdxV"}


async def test_forged_stale_and_replayed_requests_change_nothing(
    make_hub, slack: SlackPeer
) -> None:
    async with make_hub(**http_mode(slack)) as hub:
        through(hub, slack)
        channel = await hub.link_slack(hub.owner, slack, ADA)  # over /slack/events
        interaction_id = await hub.ask(title="Wipe the staging database?")
        message = await eventually(
            lambda: next((m for m in slack.conversation(channel) if "Wipe" in m.all_text), None)
        )
        body = interactivity_body(slack.press_payload(ADA, message, "Approve"))

        async def post(headers: dict[str, str]) -> Any:
            return await hub.client.post(
                "/slack/interactivity", data=body, headers={**FORM, **headers}
            )

        refusals = {
            "unsigned": {},
            "forged": slack.sign(body, secret="0" * 32),
            "stale": slack.sign(body, timestamp=int(time.time()) - 6 * 60),
            "from the future": slack.sign(body, timestamp=int(time.time()) + 6 * 60),
            "tampered": {**slack.sign(body + b"&x=1")},
        }
        for why, headers in refusals.items():
            refused = await post(headers)
            assert refused.status_code == 401, why
            error = (await refused.get_json())["error"]
            assert error["code"] == "slack_signature_invalid", why
        assert await decisions(interaction_id) == 0 and message.history == []

        genuine = slack.sign(body)
        assert (await post(genuine)).status_code == 200
        await eventually(lambda: message.controls() == [])
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.RESOLVED
        # Redrawn by the press, and by the outbox's "decided" update: wait for both.
        await eventually(
            lambda: Notification.filter(
                interaction_id=interaction_id, surface="slack", kind="decided", status="sent"
            ).exists()
        )
        redrawn = len(message.history)
        replayed = await post(genuine)  # the same request again, inside the five minutes
        assert replayed.status_code == 401
        await asyncio.sleep(0.5)  # time for a redraw or a told refusal, were there any
        assert await decisions(interaction_id) == 1
        assert len(message.history) == redrawn and slack.told(ADA) == []


async def test_every_press_and_modal_works_over_signed_posts(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**http_mode(slack)) as hub:
        through(hub, slack)
        channel = await hub.link_slack(hub.owner, slack, ADA)
        choice = await hub.ask(
            type="choice",
            title="Which region?",
            options=[{"id": "eu", "label": "Europe"}, {"id": "us", "label": "United States"}],
        )
        typed = await hub.ask(type="input", title="Contact address?", input={"format": "email"})
        stranger = "U0EVE"

        region = await eventually(
            lambda: next((m for m in slack.conversation(channel) if "region" in m.all_text), None)
        )
        await slack.press(stranger, region, "Europe")
        assert await eventually(lambda: slack.told(stranger)) == ["This card is for someone else."]
        await slack.press(ADA, region, "Europe")
        await eventually(lambda: region.controls() == [])
        assert (await Interaction.get(id=choice)).response == {"optionId": "eu"}

        address = await eventually(
            lambda: next((m for m in slack.conversation(channel) if "Contact" in m.all_text), None)
        )
        await slack.press(ADA, address, "Answer")
        modal = await eventually(lambda: slack.open_view(ADA))
        refused = await slack.submit(ADA, modal, {"answer": "nobody"})
        assert refused and refused["response_action"] == "errors"
        assert await slack.submit(ADA, modal, {"answer": "ops@example.com"}) is None
        await eventually(lambda: address.controls() == [])
        assert (await Interaction.get(id=typed)).response == {"text": "ops@example.com"}
