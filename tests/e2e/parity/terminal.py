"""The person at the MCP agent's terminal: the official MCP client's elicitation callback,
holding each question the hub puts to it until the test answers it, card by card.

On the 2025-11-25 handshake a card's form is an ``elicitation/create`` request while the
tool call waits; an answer elsewhere first ends the request (``notifications/cancelled``),
which is how the terminal's copy turns read-only: the question is withdrawn (``Question.
withdrawn``) and the tool call returns the decision, naming who decided and via what.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from hub.testing import eventually

# A question nobody answers is dismissed after this long, so no callback outlives its test.
HELD_AT_MOST_S = 120.0


@dataclass
class Question:
    params: ElicitRequestFormParams
    reply: asyncio.Future[ElicitResult]
    withdrawn: bool = False  # the hub ended it: an answer elsewhere came first
    replied: bool = False

    @property
    def message(self) -> str:
        return self.params.message

    @property
    def fields(self) -> dict[str, Any]:
        properties: dict[str, Any] = self.params.requested_schema["properties"]
        return properties

    def answer(self, content: dict[str, Any]) -> None:
        self.reply.set_result(ElicitResult(action="accept", content=content))


@dataclass
class TerminalPerson:
    questions: list[Question] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams), params  # no secret is asked here
        question = Question(params, asyncio.get_running_loop().create_future())
        self.questions.append(question)
        try:
            result = await asyncio.wait_for(asyncio.shield(question.reply), HELD_AT_MOST_S)
        except asyncio.CancelledError:
            question.withdrawn = True
            raise
        except TimeoutError:
            return ElicitResult(action="cancel")  # type: ignore[arg-type]
        question.replied = True
        return result

    def about(self, title: str) -> list[Question]:
        """The questions put about the card titled ``title`` (a batch's form names each)."""
        return [q for q in self.questions if title in q.message]

    async def asked(self, title: str, within: float, after: int = 0) -> Question:
        """The question about ``title`` once it is put (the ``after``-th and later: a
        question asked again, with the reason the answer before did not fit)."""
        found: Question = await eventually(
            lambda: next(iter(self.about(title)[after:]), None), within=within
        )
        return found
