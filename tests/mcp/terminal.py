"""The person at the agent's terminal, for tests: answering the hub's cards through MCP
elicitation, in the official MCP client.

An MCP client that can show forms (``elicitation_callback``) is asked the same card the
hub shows on the web, by email and in Telegram; the first answer wins. ``Terminal`` is that
person, ``answer_at_terminal`` one card answered by them from start to end. Use them in
any test that wants "the terminal" as one more surface::

    from tests.mcp.conftest import http_agent, paired_credential
    from tests.mcp.terminal import Terminal, answer_at_terminal

    # an MCP agent's credential on a live hub (``tests.sdk.live.LiveHub``); the first
    # connection confirms the agent in the hub
    credential = await paired_credential(hub, tmp_path / "agent")

    # the whole round: connect, ask, answer at the terminal, get the decision
    decision = await answer_at_terminal(
        hub, credential, "request_approval", {"action": "Deploy v2"}, {"choice": "approve"}
    )
    assert decision["via"] == "terminal"

    # or keep the client and decide when the terminal answers
    terminal = Terminal(answer={"choice": "approve"}, hold=True)
    async with http_agent(hub, credential, elicitation_callback=terminal) as agent:
        call = await agent.call_in_background("request_approval", action="Deploy v2")
        question = await terminal.next_question()  # the card reached the terminal
        ...  # answer it elsewhere first, or:
        terminal.release()

The fields of a form are named by the card's kind (``forms.py``): ``choice`` (an option
id) and ``comment`` for an approval, a review or a single choice, with ``edit_<field>`` for
each editable field of an exact action; ``choices`` (a list of ids) for a multiple choice;
``text`` for an input. A batch prefixes each item's fields with
``item1_``, ``item2_``, .... A sensitive input is not a form: the client is asked to open
the card's page on the hub (URL mode), and ``Terminal.opened`` lists the pages.

What the terminal cannot do, by design (a parity table marks these cells "not offered"):
answer a card with named approvers or a quorum (it waits for those people), or see a
sensitive input's value. An answer at the terminal withdraws the card in the hub ("answered
in the terminal", the answer beside it), which turns it read-only on every surface.

``mode="legacy"`` on the client speaks 2025-11-25 (the form is an ``elicitation/create``
request while the call waits); the default ``"auto"`` speaks 2026-07-28 (the form rides an
input-required result and the client retries the call with the answer). Both are driven
by the official client; the callback is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from tests.mcp.conftest import http_agent
from tests.sdk.live import LiveHub

Answer = dict[str, Any] | Callable[[ElicitRequestFormParams], dict[str, Any] | None]


@dataclass
class Terminal:
    """An ``elicitation_callback`` for ``mcp.Client``: the person at the agent's terminal.

    ``answer``: the form's content to submit, or a function of the form's params that
    returns it (None declines). ``hold=True`` keeps each question open until
    ``release()``, so a test can answer the card elsewhere first; a question the server
    withdraws meanwhile (an answer in the hub ends it) is counted in ``withdrawn``.
    ``action`` is what the person does: ``accept`` (submit), ``decline`` or ``cancel``.
    """

    answer: Answer = field(default_factory=dict)
    action: str = "accept"
    hold: bool = False
    questions: list[ElicitRequestParams] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    withdrawn: int = 0
    _asked: asyncio.Queue[ElicitRequestParams] = field(default_factory=asyncio.Queue)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.questions.append(params)
        self._asked.put_nowait(params)
        if self.hold:
            try:
                await self._released.wait()
            except asyncio.CancelledError:
                self.withdrawn += 1
                raise
        if not isinstance(params, ElicitRequestFormParams):
            self.opened.append(params.url)  # a browser opens the hub's page: nothing here
            return ElicitResult(action="accept")  # type: ignore[arg-type]
        if self.action != "accept":
            return ElicitResult(action=self.action)  # type: ignore[arg-type]
        content = self.answer(params) if callable(self.answer) else self.answer
        if content is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=content)

    async def next_question(self, within: float = 30.0) -> ElicitRequestParams:
        """The next question the terminal is asked (waits for it, up to ``within`` s)."""
        return await asyncio.wait_for(self._asked.get(), within)

    def release(self) -> None:
        """Let the held questions be answered."""
        self._released.set()


async def answer_at_terminal(
    hub: LiveHub,
    credential: str,
    tool: str,
    arguments: dict[str, Any],
    content: Answer,
    *,
    mode: str = "auto",
) -> dict[str, Any]:
    """Call ``tool`` on the hub's ``/mcp/`` as the agent with ``credential``, answer its
    card at the terminal with the form ``content``, and return the tool's result (the
    decision: ``via`` is ``terminal`` when the terminal's answer won)."""
    terminal = Terminal(answer=content)
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        result, _ = await agent.call(tool, **arguments)
    assert terminal.questions, f"{tool} never asked the terminal"
    return result
