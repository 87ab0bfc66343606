"""Slack: Ada's conversation with the hub's app, through a local Slack over Socket Mode.

The hub reaches the Slack on loopback (``tests.channels.slack_peer``) with slack-sdk's own
Web API and Socket Mode clients; Ada's presses and modal submissions arrive as Slack sends
them, as Socket Mode envelopes the hub acknowledges.
"""

from __future__ import annotations

import json
from typing import Any

from hub.channels.slack.modals import ANSWER_BLOCK, FIELD_BLOCK
from hub.testing import eventually
from tests.channels.slack_wire import SlackMessage
from tests.e2e.parity.stage import ADA_IN_SLACK, WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import Fire, Surface, outcome


class Slack(Surface):
    name = "slack"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.slack = stage.slack
        self.messages: dict[str, SlackMessage] = {}
        self.stale: dict[str, dict[str, Any]] = {}  # a press, sent once the card is decided
        self.raced: dict[str, tuple[int, Any]] = {}  # told so far, and a race's answer

    async def _message(self, text: str) -> SlackMessage:
        def find() -> SlackMessage | None:
            chat = self.slack.conversation(self.stage.slack_channel)
            return next((m for m in chat if text in m.all_text and m.controls()), None)

        found: SlackMessage = await eventually(find, within=WAIT_S)
        return found

    async def shown(self, card: Asked) -> None:
        message = await self._message(card.title)
        self.messages[card.id] = message
        first = message.buttons()[0]
        self.stale[card.id] = self.slack.press_payload(ADA_IN_SLACK, message, first)

    async def _open(self, message: SlackMessage, label: str) -> Any:
        """Press ``label``, which opens a modal; the modal (not one left open before)."""
        before = set(self.slack.views)
        await self.slack.press(ADA_IN_SLACK, message, label)

        def opened() -> Any:
            fresh = [v for k, v in self.slack.views.items() if k not in before]
            return next((v for v in fresh if v.user == ADA_IN_SLACK and not v.closed), None)

        return await eventually(opened, within=WAIT_S)

    async def answer(self, card: Asked) -> None:
        message, kind, answer = self.messages[card.id], card.kind, card.kind.answer
        if "optionIds" in answer:
            told = len(self.slack.told(ADA_IN_SLACK))
            await self.slack.press(ADA_IN_SLACK, message, "Submit")  # nothing ticked
            await eventually(lambda: len(self.slack.told(ADA_IN_SLACK)) > told, within=WAIT_S)
            ticks = [kind.label(o) for o in answer["optionIds"]]
            await self.slack.press(ADA_IN_SLACK, message, "", ticks=ticks)
            await self.slack.press(ADA_IN_SLACK, message, "Submit")
        elif "text" in answer:
            modal = await self._open(message, "Answer…")
            wrong = kind.wrong["text"]  # type: ignore[index]
            refused = await self.slack.submit(ADA_IN_SLACK, modal, {ANSWER_BLOCK: wrong})
            assert refused and ANSWER_BLOCK in refused["errors"], refused  # said on the field
            done = await self.slack.submit(ADA_IN_SLACK, modal, {ANSWER_BLOCK: answer["text"]})
            assert done is None, done
        elif answer.get("comment"):
            modal = await self._open(message, kind.label(answer["optionId"]))
            await self.slack.submit(ADA_IN_SLACK, modal, {ANSWER_BLOCK: answer["comment"]})
        else:
            await self.slack.press(ADA_IN_SLACK, message, kind.label(answer["optionId"]))
        # A press is acknowledged before it is handled: the message says when it was.
        await eventually(lambda: message.controls() == [], within=WAIT_S)

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        message = self.messages[card.id]
        await eventually(lambda: outcome(via, who) in message.all_text, within=WAIT_S)
        assert message.controls() == []
        # A press on the copy shown before is told who decided.
        before = len(self.slack.told(ADA_IN_SLACK))
        await self.slack.interact(self.stale[card.id])
        late = await eventually(lambda: self.slack.told(ADA_IN_SLACK)[before:], within=WAIT_S)
        assert outcome(via, who) in late[0], late

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        message, kind, answer = self.messages[card.id], card.kind, card.kind.answer
        told = len(self.slack.told(ADA_IN_SLACK))
        if "optionIds" in answer:
            ticks = [kind.label(o) for o in answer["optionIds"]]
            await self.slack.press(ADA_IN_SLACK, message, "", ticks=ticks)
            payload = self.slack.press_payload(ADA_IN_SLACK, message, "Submit")
        elif "text" in answer or answer.get("comment"):
            label = "Answer…" if "text" in answer else kind.label(answer["optionId"])
            modal = await self._open(message, label)
            typed = answer.get("text") or answer["comment"]

            async def submit() -> None:
                answered = await self.slack.submit(ADA_IN_SLACK, modal, {ANSWER_BLOCK: typed})
                self.raced[card.id] = (told, answered)

            return submit
        else:
            payload = self.slack.press_payload(
                ADA_IN_SLACK, message, kind.label(answer["optionId"])
            )

        async def press() -> None:
            self.raced[card.id] = (told, await self.slack.interact(payload))

        return press

    async def told(self, card: Asked, winner: str) -> None:
        before, answered = self.raced.pop(card.id)
        said_here = outcome(winner)

        def told_so() -> bool:  # in place (a modal's answer) or as a note only Ada sees
            later = self.slack.told(ADA_IN_SLACK)[before:]
            return said_here in json.dumps(answered) or any(said_here in t for t in later)

        try:
            await eventually(told_so, within=WAIT_S)
        except AssertionError:
            later = self.slack.told(ADA_IN_SLACK)[before:]
            raise AssertionError(f"not told {said_here!r}: {answered!r}, {later!r}") from None

    async def answer_edited(self, card: Asked) -> None:
        modal = await self._open(self.messages[card.id], "Edit and approve…")
        typed = {f"{FIELD_BLOCK}{k}": str(v) for k, v in card.kind.answer["action"].items()}
        assert await self.slack.submit(ADA_IN_SLACK, modal, typed) is None

    async def vote(self, card: Asked) -> None:
        message = self.messages[card.id]
        await self.slack.press(ADA_IN_SLACK, message, "Approve")
        await eventually(
            lambda: "Your vote is recorded: 1 of 2 approvals." in message.all_text, within=WAIT_S
        )
        assert message.controls() == []  # the voter's copy asks no more

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        message = self.messages[card.id]
        await eventually(lambda: f"{approvals} of 2 approvals" in message.all_text, within=WAIT_S)

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        if set(picks) != {"approve"}:  # item by item: each card's own buttons
            for card, pick in zip(cards, picks, strict=True):
                await self.slack.press(ADA_IN_SLACK, self.messages[card.id], pick.capitalize())
            return
        batch = await self._message(f"{len(cards)} approvals wait in “{cards[0].task_title}”")
        await self.slack.press(ADA_IN_SLACK, batch, f"Approve all ({len(cards)})")
        await eventually(lambda: batch.controls() == [], within=WAIT_S)
