"""MCP: the person at the terminal of an agent connected through the hub's MCP server.

The agent is the official MCP client on the hub's ``/mcp/``, declaring elicitation; every
card it asks is also put to the person at its terminal as a form (``elicitation/create``,
``tests.e2e.parity.terminal``), and the first answer wins. An answer at the terminal
withdraws the card in the hub ("answered in the terminal", recorded ``via terminal``);
an answer elsewhere first ends the terminal's question, and the tool call returns that
answer, saying who decided and through which surface.

What the terminal cannot answer, by design (``cannot``): a card with named approvers or a
quorum (an answer at the terminal names nobody, so it would step around the policy; the
card waits for its approvers in the hub). A proposed action's editable fields are fields of
its form, holding the proposed values.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.e2e.parity.stage import WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import Fire, Surface
from tests.e2e.parity.terminal import Question


def form_content(answer: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The terminal form's fields that give ``answer`` (``plugins.mcp_server.forms``)."""
    if "optionIds" in answer:
        return {f"{prefix}choices": answer["optionIds"]}
    if "text" in answer:
        return {f"{prefix}text": answer["text"]}
    content = {f"{prefix}choice": answer["optionId"]}
    if answer.get("comment"):
        content[f"{prefix}comment"] = answer["comment"]
    return content


class Mcp(Surface):
    name = "terminal"
    cannot: ClassVar[dict[str, str]] = {
        "quorum": "a card with named approvers or a quorum is not asked at the terminal, "
        "where the answer names nobody; it waits for its approvers in the hub",
    }

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.terminal = stage.terminal

    async def shown(self, card: Asked) -> None:
        if card.policy is None:  # a card for named approvers is not asked here (``cannot``)
            await self.terminal.asked(card.title, WAIT_S)

    async def _question(self, card: Asked) -> Question:
        return await self.terminal.asked(card.title, WAIT_S)

    async def answer(self, card: Asked) -> None:
        question = await self._question(card)
        if card.kind.wrong is not None:
            question.answer(form_content(card.kind.wrong))
            # Asked again, with why: nothing was decided.
            question = await self.terminal.asked(card.title, WAIT_S, after=1)
            assert "Please answer again" in question.message, question.message
            assert (await self.stage.card(card.id))["status"] == "pending"
        question.answer(form_content(card.kind.answer))

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        heard = await card.heard()  # what the tool call returned: who decided, and where
        assert heard.via == via, heard
        asked = self.terminal.about(card.title)
        if via == self.name:
            assert heard.responded_by == "terminal" and asked[-1].replied
            return
        if card.policy is not None:  # never asked here: it waits for its approvers
            assert asked == []
            return
        people = {"Ada": self.stage.ada.user_id, "Bo": self.stage.bo.user_id}
        assert heard.responded_by == f"user:{people[who]}", heard
        # The answer elsewhere ended the question: the terminal takes no answer now.
        assert asked and all(q.withdrawn for q in asked), asked

    async def ready(self, card: Asked) -> Fire:
        question = await self._question(card)

        async def fire() -> None:
            question.answer(form_content(card.kind.answer))

        return fire

    async def told(self, card: Asked, winner: str) -> None:
        heard = await card.heard()
        assert heard.via == winner, heard
        # Its answer came too late (the question ended, or its answer was refused):
        (question,) = self.terminal.about(card.title)
        assert question.withdrawn or question.replied, question

    async def answer_edited(self, card: Asked) -> None:
        """The form shows the exact action and a field for each editable one, holding the
        proposed value; the person changes it and approves."""
        question = await self._question(card)
        edits = {f"edit_{name}": value for name, value in card.kind.answer["action"].items()}
        assert set(question.fields) == {"choice", "comment", *edits}, question.fields
        assert "Exactly: db.migration" in question.message, question.message
        question.answer({"choice": "approve", **edits})

    async def vote(self, card: Asked) -> None:
        """Not offered (``cannot``): the terminal was never asked a quorum card."""
        assert self.terminal.about(card.title) == []

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        assert self.terminal.about(card.title) == []

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        """One form for the task's approvals, a choice per item: all approved, or each its
        own."""
        (question,) = {id(q): q for c in cards for q in self.terminal.about(c.title)}.values()
        content: dict[str, Any] = {}
        for number, pick in enumerate(picks, 1):
            content |= form_content({"optionId": pick}, prefix=f"item{number}_")
        question.answer(content)
