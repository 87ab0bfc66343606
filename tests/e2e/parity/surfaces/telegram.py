"""Telegram: Ada's chat with the hub's bot, through a local Bot API server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from hub.testing import eventually
from tests.channels.peers import SentMessage
from tests.e2e.parity.forms import forms_in
from tests.e2e.parity.stage import ADA_TELEGRAM, WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import TERMINAL, Fire, Surface, outcome


class Telegram(Surface):
    """Ada's phone: presses and replies sent as Telegram updates that the hub long-polls.
    Editing an action happens behind the message's "Edit and approve on the web" button (a
    signed link, opened as a phone's browser would), recorded ``via web``."""

    name = "telegram"
    edits_via = "web"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.bot_api = stage.bot_api
        self.messages: dict[str, SentMessage] = {}
        self.stale: dict[str, str] = {}  # a button's data, to press once the card is decided
        self.raced: dict[str, Callable[[], Any]] = {}  # how to find a race's press answered

    async def _message(self, starts: str) -> SentMessage:
        def find() -> SentMessage | None:
            chat = self.bot_api.chat(ADA_TELEGRAM)
            return next((m for m in chat if m.text.startswith(starts)), None)

        found: SentMessage = await eventually(find, within=WAIT_S)
        return found

    async def shown(self, card: Asked) -> None:
        message = await self._message(f"<b>{card.title}</b>")
        self.messages[card.id] = message
        if message.buttons():  # an input card takes a reply instead
            self.stale[card.id] = message.buttons()[0]["callback_data"]

    async def _press(self, message: SentMessage, label: str) -> dict[str, Any]:
        query = self.bot_api.press(ADA_TELEGRAM, message, message.button(label)["callback_data"])
        answered: dict[str, Any] = await eventually(
            lambda: self.bot_api.answers.get(query), within=WAIT_S
        )
        return answered

    async def _reply(self, to: int, text: str) -> SentMessage:
        """Reply to message ``to``; the bot's next message in the chat."""
        before = {m.message_id for m in self.bot_api.chat(ADA_TELEGRAM)}
        self.bot_api.send_text(ADA_TELEGRAM, text, reply_to=to)
        found: SentMessage = await eventually(
            lambda: next(
                (m for m in self.bot_api.chat(ADA_TELEGRAM) if m.message_id not in before), None
            ),
            within=WAIT_S,
        )
        return found

    async def answer(self, card: Asked) -> None:
        message = self.messages[card.id]
        kind, answer = card.kind, card.kind.answer
        if "optionIds" in answer:
            refused = await self._press(message, "Submit")
            assert refused.get("show_alert") is True  # nothing ticked: told why
            for option in answer["optionIds"]:
                await self._press(message, kind.label(option))
            await self._press(message, f"Submit ({len(answer['optionIds'])})")
        elif "text" in answer:
            retry = await self._reply(message.message_id, kind.wrong["text"])  # type: ignore[index]
            assert "doesn't fit" in retry.text
            await self._reply(retry.message_id, answer["text"])
        elif answer.get("comment"):
            await self._press(message, kind.label(answer["optionId"]))
            prompt = self.bot_api.chat(ADA_TELEGRAM)[-1]
            await self._reply(prompt.message_id, answer["comment"])
        else:
            await self._press(message, kind.label(answer["optionId"]))

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        message = self.messages[card.id]
        await eventually(lambda: outcome(via, who) in message.text, within=WAIT_S)
        assert message.buttons() == []
        if card.id in self.stale:
            # A press on a copy of the old buttons is answered with who decided first.
            query = self.bot_api.press(ADA_TELEGRAM, message, self.stale[card.id])
            late = await eventually(lambda: self.bot_api.answers.get(query), within=WAIT_S)
            assert outcome(via, who) in late["text"], late
        else:  # so is a late reply
            told = await self._reply(message.message_id, "ops@example.com")
            assert outcome(via, who) in told.text, told.text

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        message = self.messages[card.id]
        answer, kind = card.kind.answer, card.kind
        if "optionIds" in answer:
            for option in answer["optionIds"]:
                await self._press(message, kind.label(option))
            data = message.button(f"Submit ({len(answer['optionIds'])})")["callback_data"]
        elif "text" in answer:

            async def reply() -> None:
                self._raced_reply(card, message.message_id, answer["text"])

            return reply
        elif answer.get("comment"):
            await self._press(message, kind.label(answer["optionId"]))
            prompt = self.bot_api.chat(ADA_TELEGRAM)[-1]

            async def comment() -> None:
                self._raced_reply(card, prompt.message_id, answer["comment"])

            return comment
        else:
            data = message.button(kind.label(answer["optionId"]))["callback_data"]

        async def press() -> None:
            query = self.bot_api.press(ADA_TELEGRAM, message, data)
            self.raced[card.id] = lambda: (self.bot_api.answers.get(query) or {}).get("text")

        return press

    def _raced_reply(self, card: Asked, to: int, text: str) -> None:
        before = {m.message_id for m in self.bot_api.chat(ADA_TELEGRAM)}
        self.bot_api.send_text(ADA_TELEGRAM, text, reply_to=to)

        def answered() -> str | None:
            chat = self.bot_api.chat(ADA_TELEGRAM)
            fresh = [m.text for m in chat if m.message_id not in before]
            # A reply to a card decided meanwhile is answered with the outcome.
            return next((t for t in fresh if "by Ada via" in t or outcome(TERMINAL) in t), None)

        self.raced[card.id] = answered

    async def told(self, card: Asked, winner: str) -> None:
        answered = await eventually(self.raced.pop(card.id), within=WAIT_S)
        assert outcome(winner) in answered, answered
        assert not answered.startswith("Thank you"), answered

    async def answer_edited(self, card: Asked) -> None:
        link = self.messages[card.id].button("Edit and approve on the web")["url"]
        async with httpx.AsyncClient(timeout=30) as phone:
            page = await phone.get(link)
            assert page.status_code == 200 and card.title in page.text
            (form,) = forms_in(page.text)
            fields = {f"action.{k}": str(v) for k, v in card.kind.answer["action"].items()}
            decided = await phone.post(link, **form.submit({"optionId": "approve", **fields}))
        assert decided.status_code == 200, decided.text

    async def vote(self, card: Asked) -> None:
        message = self.messages[card.id]
        await self._press(message, "Approve")
        await eventually(
            lambda: "Your vote is recorded: 1 of 2 approvals." in message.text, within=WAIT_S
        )
        assert message.buttons() == []  # the voter's copy asks no more

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        message = self.messages[card.id]
        await eventually(lambda: f"{approvals} of 2 approvals" in message.text, within=WAIT_S)

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        batch = await self._message(f"<b>{len(cards)} approvals wait in “{cards[0].task_title}”")
        if set(picks) == {"approve"}:
            answered = await self._press(batch, f"Approve all ({len(cards)})")
        else:  # item by item: each card's own buttons
            for card, pick in zip(cards, picks, strict=True):
                await self._press(self.messages[card.id], pick.capitalize())
            return
        assert f"Recorded {len(cards)} answers." in answered["text"], answered
