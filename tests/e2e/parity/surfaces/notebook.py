"""The notebook inbox: a real Jupyter kernel, its widgets pressed as a browser would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.e2e.parity.stage import Asked, Stage
from tests.e2e.parity.surfaces.base import Fire, Surface, outcome


class Notebook(Surface):
    """Ada's notebook inbox (``hub.notebook``) in a real kernel; clicks and typed values go
    to its widgets as comm messages, as JupyterLab sends them."""

    name = "notebook"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.kernel = stage.kernel

    async def _widget(self, card: Asked, *classes: str) -> str:
        return await self.kernel.widget(f"lineup-card-{card.id}", *classes)

    async def shown(self, card: Asked) -> None:
        await self._widget(card, "lineup-card")
        status = await self._widget(card, "lineup-status")
        assert "Decided" not in str(self.kernel.value(status))

    async def _status(self, card: Asked, holds: Callable[[str], bool]) -> str:
        status = await self._widget(card, "lineup-status")
        value: str = await self.kernel.until(status, "value", lambda v: holds(str(v)))
        return value

    async def _fill(self, card: Asked, answer: dict[str, Any]) -> str:
        """Fill the widget's fields with ``answer``; the comm id of the button that sends it."""
        if "optionIds" in answer:
            for option in answer["optionIds"]:
                self.kernel.set_value(await self._widget(card, f"lineup-option-{option}"), True)
            return await self._widget(card, "lineup-submit")
        if "text" in answer:
            self.kernel.set_value(await self._widget(card, "lineup-text"), answer["text"])
            return await self._widget(card, "lineup-submit")
        if answer.get("comment"):
            self.kernel.set_value(await self._widget(card, "lineup-comment"), answer["comment"])
        return await self._widget(card, f"lineup-option-{answer['optionId']}")

    async def answer(self, card: Asked) -> None:
        if card.kind.wrong is not None:
            self.kernel.click(await self._fill(card, card.kind.wrong))
            said_why = await self._status(card, lambda v: "Not sent" in v)
            assert "Not sent" in said_why
        self.kernel.click(await self._fill(card, card.kind.answer))
        await self._status(card, lambda v: "Decided" in v)

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        said_here = outcome(via, who)
        status = await self._status(card, lambda v: "Decided" in v or said_here in v)
        assert said_here in status, status
        for comm_id in self.kernel.find(f"lineup-card-{card.id}"):
            state = self.kernel.widgets[comm_id]
            if state.get("_model_name") in ("ButtonModel", "CheckboxModel", "TextModel"):
                await self.kernel.until(comm_id, "disabled", lambda d: d is True)

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        button = await self._fill(card, card.kind.answer)

        async def click() -> None:
            self.kernel.click(button)

        return click

    async def answer_edited(self, card: Asked) -> None:
        for name, value in card.kind.answer["action"].items():
            self.kernel.set_value(await self._widget(card, f"lineup-edit-{name}"), str(value))
        self.kernel.click(await self._widget(card, "lineup-option-approve"))
        await self._status(card, lambda v: "Decided" in v)

    async def vote(self, card: Asked) -> None:
        self.kernel.click(await self._widget(card, "lineup-option-approve"))
        await self._status(card, lambda v: "You voted: Approve." in v)
        approve = await self._widget(card, "lineup-option-approve")
        await self.kernel.until(approve, "disabled", lambda d: d is True)

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        votes = await self._widget(card, "lineup-votes")
        await self.kernel.until(
            votes, "value", lambda v: f"{approvals} of 2 approvals so far" in str(v)
        )

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        task = f"lineup-batch-{cards[0].task_id}"
        if set(picks) == {"approve"}:
            self.kernel.click(await self.kernel.widget(task, "lineup-approve-all"))
        else:
            for card, pick in zip(cards, picks, strict=True):
                choice = await self.kernel.widget(task, f"lineup-item-{card.id}")
                entries = self.kernel.value(choice, "_options_labels")
                self.kernel.set_value(choice, entries.index(pick.capitalize()), key="index")
            self.kernel.click(await self.kernel.widget(task, "lineup-send-items"))
        status = await self.kernel.widget(task, "lineup-batch-status")
        await self.kernel.until(
            status, "value", lambda v: f"Recorded {len(cards)} answers." in str(v)
        )
