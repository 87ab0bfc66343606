"""What a person may see of a sensitive answer: that it was given, by whom, how and when —
never the text.

An input card whose spec says ``sensitive`` (a password, a token an agent needs) is answered
for the agent that asked it and no one else (spec §11). The text is stored as given, in the
card's row and in its ``interaction.resolved`` event, because that agent is sent it — and
sent it again when it replays its downlink, which reads the stored event
(``plugins.lap_gateway.downlink``; the event's only recipient is the asking agent).

Everything a person is shown of a card or of the log passes through here first: the
interaction view (JSON API, inbox, client socket acks, a refused second answer), the events
API, the client socket's feed, a task's timeline, an agent's diagnostics. In place of the
answer they read ``{"hidden": true}``; who answered, via what and when stay as they are.

Sensitivity is the card's, as the agent asked it, read from the interaction row. Only an
input card's answer holds a ``text``, so only such events are looked up: a page of events
costs at most one query. A card never changes once asked, so what the database said is
remembered, and a lookup under way is shared: the thousand browser sockets one answer goes
out to make one query between them, not a thousand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from hub.core.log.bus import EventBus, PublishedEvent
from hub.core.log.envelopes import to_envelope
from hub.core.log.feed import WorkspaceFeed
from hub.core.store.models import Event, Interaction

MEMORY_SIZE = 10_000  # cards whose sensitivity is remembered, per process


def hidden_answer() -> dict[str, Any]:
    """What a person reads in place of a sensitive answer."""
    return {"hidden": True}


def is_sensitive(card: Mapping[str, Any] | None) -> bool:
    """Whether a stored card (its wire form) is an input card asking for a sensitive answer."""
    if not card or card.get("type") != "input":
        return False
    spec = card.get("input")
    return isinstance(spec, Mapping) and bool(spec.get("sensitive"))


def answer_for_people(interaction: Interaction) -> dict[str, Any] | None:
    """The card's answer as a person may see it."""
    if interaction.response is None or not is_sensitive(interaction.payload):
        return interaction.response
    return hidden_answer()


async def envelopes_for_people(workspace_id: str, events: Sequence[Event]) -> list[dict[str, Any]]:
    """The envelopes of stored events as a person may see them."""
    envelopes = [to_envelope(event) for event in events]
    hide = await _to_hide(workspace_id, [e["payload"] for e in envelopes])
    return [_without_answer(e) if hidden else e for e, hidden in zip(envelopes, hide, strict=True)]


async def published_for_people(
    workspace_id: str, events: list[PublishedEvent]
) -> list[PublishedEvent]:
    """Events off the bus or the log as a person may see them; untouched ones stay the very
    objects they were, so their serialised text is still shared between sockets."""
    hide = await _to_hide(workspace_id, [e.envelope.get("payload") for e in events])
    return [
        replace(e, envelope=_without_answer(e.envelope), _text=None) if hidden else e
        for e, hidden in zip(events, hide, strict=True)
    ]


def people_feed(workspace_id: str, after: int, *, bus: EventBus | None = None) -> WorkspaceFeed:
    """The workspace's events after ``after``, backlog then live, as a person may see them."""
    return WorkspaceFeed(workspace_id, after, bus=bus, view=published_for_people)


def _without_answer(envelope: dict[str, Any]) -> dict[str, Any]:
    # Copies: the stored payload is the agent's to replay, and the bus's envelope is shared.
    return {**envelope, "payload": {**envelope["payload"], "response": hidden_answer()}}


def _typed_answer(payload: Any) -> tuple[bool, str | None]:
    """Whether the payload carries a typed answer, and the card it answers."""
    if not isinstance(payload, Mapping):
        return False, None
    response = payload.get("response")
    if not isinstance(response, Mapping) or "text" not in response:
        return False, None
    card_id = payload.get("interactionId")
    return True, card_id if isinstance(card_id, str) else None


async def _to_hide(workspace_id: str, payloads: Sequence[Any]) -> list[bool]:
    typed = [_typed_answer(p) for p in payloads]
    ids = {card_id for has_text, card_id in typed if has_text and card_id}
    sensitive = await SENSITIVITY.sensitive(workspace_id, ids) if ids else set()
    # A typed answer whose card cannot be found is hidden: unknown is not ordinary.
    return [has_text and (card_id is None or card_id in sensitive) for has_text, card_id in typed]


class Sensitivity:
    """Which input cards are sensitive, as the database says, remembered.

    Only what the database said is remembered — a committed card's spec never changes —
    and a card it lacks is reported sensitive without being remembered.
    """

    def __init__(self, size: int = MEMORY_SIZE) -> None:
        self.size = size
        self.lookups = 0  # queries made; the tests count them
        self._known: dict[tuple[str, str], bool] = {}
        self._asking: dict[tuple[str, str], asyncio.Future[None]] = {}

    async def sensitive(self, workspace_id: str, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are sensitive cards of the workspace, or not its cards."""
        keys = {(workspace_id, card_id) for card_id in ids}
        theirs = {self._asking[k] for k in keys if k in self._asking}
        mine = [k for k in keys if k not in self._known and k not in self._asking]
        if mine:
            await self._look_up(workspace_id, mine)
        if theirs:
            await asyncio.wait(theirs)
            # Another reader's lookup that failed or was cancelled leaves its cards unknown.
            again = [k for k in keys if k not in self._known and k not in self._asking]
            if again:
                await self._look_up(workspace_id, again)
        return {card_id for (_, card_id) in keys if self._known.get((workspace_id, card_id), True)}

    async def _look_up(self, workspace_id: str, keys: list[tuple[str, str]]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        for key in keys:
            self._asking[key] = done
        try:
            self.lookups += 1
            rows = await Interaction.filter(
                workspace_id=workspace_id, id__in=[card_id for _, card_id in keys], type="input"
            ).values_list("id", "payload")
            found = {str(card_id): is_sensitive(payload) for card_id, payload in rows}
            for key in keys:
                # Only an input card's answer has a text, and only input cards were read: a
                # key not found is a card this workspace lacks, and is not remembered.
                if key[1] in found:
                    self._remember(key, found[key[1]])
        finally:
            for key in keys:
                if self._asking.get(key) is done:
                    del self._asking[key]
            done.set_result(None)

    def _remember(self, key: tuple[str, str], sensitive: bool) -> None:
        if len(self._known) >= self.size:
            del self._known[next(iter(self._known))]  # the oldest
        self._known[key] = sensitive


SENSITIVITY = Sensitivity()
"""The process's memory of which cards are sensitive."""


__all__ = [
    "SENSITIVITY",
    "Sensitivity",
    "answer_for_people",
    "envelopes_for_people",
    "hidden_answer",
    "is_sensitive",
    "people_feed",
    "published_for_people",
]
