"""Feishu: Ada's chat with the hub's bot, through a local Feishu platform.

The hub reaches the platform on loopback (``tests.channels.feishu_peer``) with lark-oapi's
own clients: its API client sends and redraws the cards, its long connection brings Ada's
presses (``card.action.trigger``, a form's values with them) as Feishu delivers them, and
each press is answered with a toast and, when the card changed, the card redrawn.
"""

from __future__ import annotations

from typing import Any

from hub.channels.feishu.render import CHOICES_FIELD, COMMENT_FIELD, TEXT_FIELD, edit_field_name
from hub.testing import eventually
from tests.channels.feishu_peer import FeishuMessage
from tests.e2e.parity.kinds import MIGRATION
from tests.e2e.parity.stage import ADA_ON_FEISHU, WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import Fire, Surface, outcome


class Feishu(Surface):
    name = "feishu"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.feishu = stage.feishu
        self.messages: dict[str, FeishuMessage] = {}
        self.stale: dict[str, dict[str, Any]] = {}  # a press, sent once the card is decided
        self.raced: dict[str, dict[str, Any]] = {}  # a race's press, answered

    async def _message(self, text: str) -> FeishuMessage:
        def find() -> FeishuMessage | None:
            chat = self.feishu.chat(self.stage.feishu_chat)
            return next((m for m in chat if text in m.text and m.controls()), None)

        found: FeishuMessage = await eventually(find, within=WAIT_S)
        return found

    async def shown(self, card: Asked) -> None:
        message = await self._message(card.title)
        self.messages[card.id] = message
        first = message.buttons()[0]
        self.stale[card.id] = self.feishu.press_event(ADA_ON_FEISHU, message, first)

    def _press_of(self, card: Asked, answer: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """The button that gives ``answer`` and the form values it sends along."""
        kind = card.kind
        if "optionIds" in answer:
            options = [o["id"] for o in kind.card["options"]]
            return "Submit", {CHOICES_FIELD: [str(options.index(o)) for o in answer["optionIds"]]}
        if "text" in answer:
            return "Send", {TEXT_FIELD: answer["text"]}
        form = {COMMENT_FIELD: answer["comment"]} if answer.get("comment") else None
        return kind.label(answer["optionId"]), form

    async def _press(self, card: Asked, answer: dict[str, Any]) -> dict[str, Any]:
        label, form = self._press_of(card, answer)
        pressed: dict[str, Any] = await self.feishu.press(
            ADA_ON_FEISHU, self.messages[card.id], label, form=form
        )
        return pressed

    async def answer(self, card: Asked) -> None:
        if card.kind.wrong is not None:
            refused = await self._press(card, card.kind.wrong)
            assert refused["toast"]["type"] == "error", refused  # told why, nothing decided
        pressed = await self._press(card, card.kind.answer)
        assert pressed["toast"]["content"].startswith("Thank you"), pressed
        await eventually(lambda: self.messages[card.id].controls() == [], within=WAIT_S)

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        message = self.messages[card.id]
        await eventually(lambda: outcome(via, who) in message.text, within=WAIT_S)
        assert message.controls() == []
        # A press on the copy shown before is told who decided.
        late = await self.feishu.deliver_press(message, self.stale[card.id])
        assert outcome(via, who) in late["toast"]["content"], late

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        message = self.messages[card.id]
        label, form = self._press_of(card, card.kind.answer)
        press = self.feishu.press_event(ADA_ON_FEISHU, message, message.button(label), form)

        async def fire() -> None:
            self.raced[card.id] = await self.feishu.deliver_press(message, press)

        return fire

    async def told(self, card: Asked, winner: str) -> None:
        pressed = self.raced.pop(card.id)
        assert outcome(winner) in pressed["toast"]["content"], pressed

    async def answer_edited(self, card: Asked) -> None:
        names = list(MIGRATION.fields)
        form = {
            edit_field_name(names.index(name)): str(value)
            for name, value in card.kind.answer["action"].items()
        }
        message = self.messages[card.id]
        pressed = await self.feishu.press(ADA_ON_FEISHU, message, "Approve", form=form)
        assert pressed["toast"]["content"].startswith("Thank you"), pressed

    async def vote(self, card: Asked) -> None:
        message = self.messages[card.id]
        voted = await self.feishu.press(ADA_ON_FEISHU, message, "Approve")
        assert voted["toast"]["content"] == "Your vote is recorded: 1 of 2 approvals.", voted
        await eventually(lambda: message.controls() == [], within=WAIT_S)  # asks no more

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        message = self.messages[card.id]
        await eventually(lambda: f"{approvals} of 2 approvals" in message.text, within=WAIT_S)

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        if set(picks) != {"approve"}:  # item by item: each card's own buttons
            for card, pick in zip(cards, picks, strict=True):
                await self.feishu.press(ADA_ON_FEISHU, self.messages[card.id], pick.capitalize())
            return
        batch = await self._message(f"{len(cards)} approvals wait in “{cards[0].task_title}”")
        done = await self.feishu.press(ADA_ON_FEISHU, batch, f"Approve all ({len(cards)})")
        assert done["toast"]["content"] == f"Recorded {len(cards)} answers.", done
