"""The person at the agent's terminal, asked through MCP elicitation beside the hub's surfaces.

When the client says it can show a form (its ``elicitation`` capability), an asking tool
sends its card to the hub as always and puts the same card to the client's user as a form
(``forms.py``). Whichever answer comes first wins: an answer at the terminal withdraws the
card in the hub ("answered in the terminal"), unless a person answered it there first, in
which case their answer stands and is returned. A sensitive input is offered as a link to
the card's page on the hub instead (URL mode), so the value never passes through the client.

How the form travels depends on the protocol revision:

* 2025-06-18 and 2025-11-25: an ``elicitation/create`` request while the tool call waits.
  An answer given in the hub ends it (the request is cancelled with
  ``notifications/cancelled``; a URL one is followed by ``notifications/elicitation/complete``).
* 2026-07-28: the tool call returns an input-required result carrying the form; the client
  retries the call with the answer and the request state, which names the cards already
  asked, so the retry asks nothing again. A client that keeps the task handle instead
  (``tasks.py``) gets the form as the task's input request, which an answer in the hub
  withdraws.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Coroutine
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hub.protocol.interactions import InteractionCard, ResponseError
from plugins.mcp_server.answers import wait_for, wait_for_all
from plugins.mcp_server.decisions import Decisions, pending_result
from plugins.mcp_server.forms import Form, batch_form, card_form, note_for, page_message
from plugins.mcp_server.results import Decision
from plugins.mcp_server.task_board import TASK_WANTED
from plugins.mcp_server.toolbox import Toolbox, ToolContext, checked, task_of, toolbox_of

logger = logging.getLogger(__name__)

# A form answered wrongly is asked again with the reason, this many times in all; then the
# card waits for the hub alone.
FORM_ATTEMPTS = 3
ANSWER_KEY = "answer"


async def ask_and_settle(
    cards: list[InteractionCard], task_id: str | None, wait: float | None, ctx: ToolContext
) -> list[Decision] | InputRequiredResult:
    """Send ``cards`` (unless this call is the retry of one that sent them) and return
    their outcomes, or the input the client must ask its user for first."""
    box = toolbox_of(ctx)
    state = _resumed(ctx)
    if state is None:
        if task_id:
            await checked(box.worklog.accept(task_of(box, task_id)))
        handles = [await checked(box.decisions.ask(card, task_id)) for card in cards]
        state = {"handles": handles, "round": 0}
    form, page = _terminal_question(box, cards, state["handles"], ctx)
    wanted = TASK_WANTED.get()
    if wanted is not None:  # the client keeps a task instead of this call (tasks.py)
        wanted.task = box.tasks.start(state["handles"], form, page)
        return [pending_result(h, 0) for h in state["handles"]]
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        asked = await _next_round(box.decisions, state, form, page, ctx)
        if asked is not None:
            return asked
    elif form is not None or page is not None:
        return await _raced_with_terminal(box, state["handles"], cards, form, page, wait, ctx)
    return await _wait(state["handles"], cards, wait, ctx)


async def _wait(
    handles: list[str], cards: list[InteractionCard], wait: float | None, ctx: ToolContext
) -> list[Decision]:
    if len(handles) == 1:
        return [await wait_for(handles[0], cards[0].title, wait, ctx)]
    return await wait_for_all(handles, [c.title for c in cards], wait, ctx)


# --- what the client may be asked -----------------------------------------------------------


def _terminal_question(
    box: Toolbox, cards: list[InteractionCard], handles: list[str], ctx: ToolContext
) -> tuple[Form | None, tuple[str, str] | None]:
    """The form to show at the terminal, or the page to open there (message, URL)."""
    elicitation = ctx.client_capabilities.elicitation if ctx.client_capabilities else None
    if elicitation is None:
        return None, None
    # A client that names no mode supports forms (2025-06-18 had no modes).
    form_mode = elicitation.form is not None or elicitation.url is None
    version = ctx.protocol_version or ""
    if len(cards) > 1:
        return (batch_form(cards, version) if form_mode else None), None
    form = card_form(cards[0], version) if form_mode else None
    sensitive = cards[0].input is not None and cards[0].input.sensitive
    if form is None and sensitive and elicitation.url is not None and box.public_url:
        return None, (page_message(cards[0]), box.card_page(handles[0]))
    return form, None


# --- 2025-06-18 and 2025-11-25: a request to the client while the call waits ------------------


async def _raced_with_terminal(
    box: Toolbox,
    handles: list[str],
    cards: list[InteractionCard],
    form: Form | None,
    page: tuple[str, str] | None,
    wait: float | None,
    ctx: ToolContext,
) -> list[Decision]:
    question: Coroutine[Any, Any, None]
    if form is not None:
        question = _ask_form(box.decisions, handles, form, ctx)
    else:
        assert page is not None
        question = _open_page(handles[0], page, ctx)
    terminal = asyncio.create_task(question, name="mcp-terminal-question")
    try:
        return await _wait(handles, cards, wait, ctx)
    finally:
        # An answer in the hub ends the question at the terminal: cancelling the request
        # tells the client (notifications/cancelled).
        terminal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await terminal
        if page is not None and box.decisions.settled(handles[0]) is not None:
            with contextlib.suppress(Exception):
                await ctx.session.send_elicit_complete(handles[0], _request_id(ctx))


async def _ask_form(decisions: Decisions, handles: list[str], form: Form, ctx: ToolContext) -> None:
    message = form.message
    for _ in range(FORM_ATTEMPTS):
        try:
            result = await ctx.session.elicit_form(message, form.schema, _request_id(ctx))
        except Exception as error:  # the client could not ask: the hub's surfaces still can
            logger.info("the terminal could not be asked: %r", error)
            return
        if result.action != "accept":
            return  # declined or dismissed at the terminal: the hub's surfaces still ask
        try:
            answers = form.answers(result.content)
        except ResponseError as error:
            message = f"{error} Please answer again.\n\n{form.message}"
            continue
        await _answered_at_terminal(decisions, handles, form, answers)
        return


async def _open_page(handle: str, page: tuple[str, str], ctx: ToolContext) -> None:
    message, url = page
    with contextlib.suppress(Exception):
        # Accepting only opens the page; the value reaches the hub there, and its answer
        # ends the wait like any other.
        await ctx.session.elicit_url(message, url, handle, _request_id(ctx))


def _request_id(ctx: ToolContext) -> Any:
    # The id as the client sent it (a number stays a number), so that the question rides
    # the stream of the tool call it belongs to.
    return ctx.request_context.request_id


async def _answered_at_terminal(
    decisions: Decisions, handles: list[str], form: Form, answers: list[dict[str, Any]]
) -> None:
    for handle, card, answer in zip(handles, form.cards, answers, strict=True):
        await decisions.answer_in_terminal(handle, answer, note_for(card, answer))


# --- 2026-07-28: the form rides an input-required result; the retry carries the answer --------


def _resumed(ctx: ToolContext) -> dict[str, Any] | None:
    """The cards this call asked in an earlier round, from the request state it echoes."""
    if ctx.request_state is None:
        return None
    try:
        state = json.loads(ctx.request_state)
        handles, rounds = state["handles"], int(state["round"])
    except (ValueError, KeyError, TypeError):
        handles, rounds = None, 0
    if not isinstance(handles, list) or not all(isinstance(h, str) for h in handles):
        raise ToolError("invalid_request_state: call the tool again without it.")
    return {"handles": handles, "round": rounds}


async def _next_round(
    decisions: Decisions,
    state: dict[str, Any],
    form: Form | None,
    page: tuple[str, str] | None,
    ctx: ToolContext,
) -> InputRequiredResult | None:
    """The input-required result that asks the terminal (again), or None once the call
    should simply wait for the hub (and find the terminal's answer, if one came)."""
    handles: list[str] = state["handles"]
    if all(decisions.settled(h) is not None for h in handles):
        return None  # answered already, in the hub or at the terminal
    key = f"{ANSWER_KEY}-{state['round']}"
    response = (ctx.input_responses or {}).get(key) if state["round"] else None
    message = None
    if isinstance(response, ElicitResult):
        if response.action != "accept" or form is None:
            return None  # declined, or a page opened: the hub's surfaces answer now
        try:
            answers = form.answers(response.content)
        except ResponseError as error:
            message = f"{error} Please answer again.\n\n{form.message}"
        else:
            await _answered_at_terminal(decisions, handles, form, answers)
            return None
    # No answer yet (the first round), a wrong one, or none sent back: ask (again).
    if state["round"] >= FORM_ATTEMPTS or (form is None and page is None):
        return None
    request = _elicitation(form, page, message)
    following = {"handles": handles, "round": state["round"] + 1}
    return InputRequiredResult(
        input_requests={f"{ANSWER_KEY}-{following['round']}": request},
        request_state=json.dumps(following),
    )


def _elicitation(
    form: Form | None, page: tuple[str, str] | None, message: str | None
) -> ElicitRequest:
    if form is not None:
        params: Any = ElicitRequestFormParams(
            message=message or form.message, requested_schema=form.schema
        )
    else:
        assert page is not None
        params = ElicitRequestURLParams(message=page[0], url=page[1])
    return ElicitRequest(params=params)
