"""People in the local Slack (``tests.channels.slack_peer``): what they send the app, and
how Slack brings it to the hub.

A person's direct message, button press and modal submission become the payloads Slack
sends (``message`` events, ``block_actions``, ``view_submission``), delivered over Socket
Mode as envelopes the hub acknowledges, or, when the hub takes Slack's posts, posted to its
endpoints form-encoded and signed as Slack signs (``v0``, HMAC-SHA256 of
``v0:{ts}:{body}``). ``SlackPeople`` is the part of ``SlackPeer`` that does this.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.channels.slack_wire import OpenView, SlackMessage, dm_channel, interactivity_body

SIGNING_SECRET = "8f742231b10e8888abcd99111222a5a5"  # 32 hex digits, as Slack makes them
TEAM = "T0LINEUP"
# Post = how a signed request reaches the hub when it takes Slack's posts: (path, body,
# headers) → (status, body as text).
Post = Callable[[str, bytes, dict[str, str]], Awaitable[tuple[int, str]]]


class SlackPeople:
    """Acting as people in Slack; mixed into ``SlackPeer``, whose state it reads."""

    url: str
    users: dict[str, dict[str, Any]]
    messages: dict[tuple[str, str], SlackMessage]
    params: list[tuple[str, dict[str, Any]]]
    ephemeral: list[dict[str, Any]]
    views: dict[str, OpenView]
    post_to_hub: Post | None
    _ids: itertools.count[int]
    _triggers: dict[str, float]
    _trigger_users: dict[str, str]
    _checkboxes: dict[tuple[str, str, str], list[dict[str, Any]]]
    _waiting: dict[str, asyncio.Future[dict[str, Any] | None]]

    def _next_ts(self) -> str:
        raise NotImplementedError

    def _wire(self, message: SlackMessage) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, envelope: dict[str, Any]) -> None:
        raise NotImplementedError

    def person(self, user: str, name: str, locale: str = "en-US") -> str:
        """A person in the Slack workspace; returns their direct conversation with the app."""
        self.users[user] = {"name": name, "locale": locale}
        return dm_channel(user)

    def conversation(self, channel: str) -> list[SlackMessage]:
        return [m for (c, _), m in sorted(self.messages.items()) if c == channel]

    def called(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.params if name == method]

    def told(self, user: str) -> list[str]:
        """The ephemeral messages ``user`` was shown."""
        return [str(e["text"]) for e in self.ephemeral if e["user"] == user]

    async def send_dm(self, user: str, text: str) -> None:
        channel = dm_channel(user)
        event = {
            "type": "message",
            "channel": channel,
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": self._next_ts(),
            "team": TEAM,
        }
        envelope = {
            "type": "event_callback",
            "team_id": TEAM,
            "api_app_id": "A0LINEUP",
            "event": event,
            "event_id": f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
        }
        if self.post_to_hub is not None:
            await self._post("/slack/events", json.dumps(envelope).encode(), "application/json")
        else:
            await self._envelope("events_api", envelope)

    async def press(
        self, user: str, message: SlackMessage, label: str, *, ticks: list[str] | None = None
    ) -> dict[str, Any] | None:
        """``user`` presses the button labelled ``label`` (or, with ``ticks``, sets the
        checkboxes to those option labels) on ``message``."""
        return await self.interact(self.press_payload(user, message, label, ticks=ticks))

    def press_payload(
        self, user: str, message: SlackMessage, label: str, *, ticks: list[str] | None = None
    ) -> dict[str, Any]:
        """The ``block_actions`` payload Slack sends for that press."""
        control = message.control("checkboxes" if ticks is not None else label)
        action: dict[str, Any] = {
            "action_id": control["action_id"],
            "block_id": "b",
            "type": control["type"],
            "action_ts": self._next_ts(),
        }
        key = (message.channel, message.ts, user)
        if ticks is not None:
            chosen = [o for o in control["options"] if o["text"]["text"] in ticks]
            self._checkboxes[key] = chosen
            action["selected_options"] = chosen
        else:
            action["text"] = control["text"]
            action["value"] = control.get("value", "")
        state = {"values": {}}
        for block in message.blocks:
            for element in block.get("elements") or []:
                if element.get("type") == "checkboxes":
                    chosen = self._checkboxes.get(key, element.get("initial_options") or [])
                    state["values"][block.get("block_id", "b")] = {
                        element["action_id"]: {"type": "checkboxes", "selected_options": chosen}
                    }
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "A0LINEUP",
            "token": "legacy-verification-token",
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
            },
            "trigger_id": self._trigger(user),
            "team": {"id": TEAM, "domain": "lineup-test"},
            "channel": {"id": message.channel, "name": "directmessage"},
            "message": self._wire(message),
            "state": state,
            "response_url": f"{self.url}/actions/{next(self._ids)}",
            "actions": [action],
        }
        return payload

    async def submit(
        self, user: str, view: OpenView, values: dict[str, str]
    ) -> dict[str, Any] | None:
        """``user`` submits the modal with ``values`` (block id → typed text); returns the
        hub's answer, and keeps the modal as the answer leaves it."""
        state = {
            block: {"text": {"type": "plain_text_input", "value": text}}
            for block, text in values.items()
        }
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "lineup-test"},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "A0LINEUP",
            "trigger_id": self._trigger(user),
            "view": {
                **view.view,
                "id": view.id,
                "state": {"values": state},
                "hash": f"h{next(self._ids)}",
            },
        }
        answer = await self.interact(payload)
        if answer and answer.get("response_action") == "update":
            view.view = answer["view"]
        elif not answer or answer.get("response_action") in ("clear", None):
            view.closed = True
        return answer

    def open_view(self, user: str) -> OpenView | None:
        """The modal ``user`` has open (the newest), if any."""
        opened = [v for v in self.views.values() if v.user == user and not v.closed]
        return opened[-1] if opened else None

    async def interact(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Deliver an interaction payload as Slack would; returns the hub's answer to it."""
        if self.post_to_hub is not None:
            body = interactivity_body(payload)
            status, text = await self._post(
                "/slack/interactivity", body, "application/x-www-form-urlencoded"
            )
            assert status == 200, (status, text)
            return json.loads(text) if text.strip() else None
        return await self._envelope("interactive", payload)

    def _trigger(self, user: str) -> str:
        trigger = (
            f"{next(self._ids)}.{int(time.time())}.{hashlib.sha1(user.encode()).hexdigest()[:12]}"
        )
        self._triggers[trigger] = time.monotonic()
        self._trigger_users[trigger] = user
        return trigger

    async def _envelope(
        self, kind: str, payload: dict[str, Any], within: float = 10.0
    ) -> dict[str, Any] | None:
        envelope_id = f"env-{next(self._ids)}"
        waiting: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._waiting[envelope_id] = waiting
        self._send(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind == "interactive",
            }
        )
        return await asyncio.wait_for(waiting, within)

    # --- HTTP mode: Slack's signed posts -------------------------------------------------

    def sign(
        self, body: bytes, timestamp: int | None = None, secret: str = SIGNING_SECRET
    ) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        base = b"v0:" + ts.encode() + b":" + body
        digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}

    async def _post(self, path: str, body: bytes, content_type: str) -> tuple[int, str]:
        assert self.post_to_hub is not None
        headers = {"Content-Type": content_type, **self.sign(body)}
        return await self.post_to_hub(path, body, headers)
