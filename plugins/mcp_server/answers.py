"""Waiting for a person's answer, and the tool that collects it later: get_decision.

An asking tool blocks until a person answers, sending a progress notification every few
seconds, up to a bounded wait; then it returns a pending handle instead (``decisions.py``
says why). Clients must pass a progress callback, or their own read timeout ends a long
wait first; the default wait stays below the common five minutes.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from plugins.mcp_server.decisions import outcome_result, pending_result
from plugins.mcp_server.results import Decision
from plugins.mcp_server.toolbox import ToolContext, toolbox_of

WaitSeconds = Annotated[
    float | None,
    Field(
        None,
        ge=0,
        le=3600,
        description="How long to wait for the answer before returning a pending handle; "
        "default: the server's setting.",
    ),
]


async def wait_for(handle: str, title: str, wait: float | None, ctx: ToolContext) -> Decision:
    """What a tool returns for ``handle``: the answer, a cancellation, or, once ``wait``
    seconds (default: the server's setting) pass unanswered, the pending handle again."""
    box = toolbox_of(ctx)
    wait_s = box.wait_s if wait is None else wait

    async def tick(elapsed: float, total: float) -> None:
        await ctx.report_progress(elapsed, total, f"Waiting for a person: {title}")

    await tick(0, wait_s)
    outcome = await box.decisions.wait(handle, wait_s, tick)
    return outcome_result(outcome) if outcome else pending_result(handle, wait_s)


async def get_decision(
    handle: Annotated[str, Field(description="The handle a pending asking tool returned.")],
    ctx: ToolContext,
    wait_seconds: WaitSeconds = None,
) -> Decision:
    """Collect the person's answer to an earlier request, waiting up to wait_seconds.

    Returns the same shape as the asking tool would have: status 'decided' with the
    answer, or status 'pending' again.
    """
    decisions = toolbox_of(ctx).decisions
    if not decisions.knows(handle):
        raise ToolError(
            f"unknown_handle: no request of yours has the handle {handle!r}. Use the handle an "
            "asking tool returned (status 'pending'), or read lineup://interactions/pending "
            "for the requests still open."
        )
    asked = decisions.pending.get(handle)
    return await wait_for(handle, asked.card.title if asked else handle, wait_seconds, ctx)


async def wait_for_all(
    handles: list[str], titles: list[str], wait: float | None, ctx: ToolContext
) -> list[Decision]:
    """``wait_for`` for several requests at once: one outcome per handle, in order."""
    box = toolbox_of(ctx)
    wait_s = box.wait_s if wait is None else wait
    label = f"{len(handles)} requests: " + "; ".join(titles)

    async def tick(elapsed: float, total: float) -> None:
        await ctx.report_progress(elapsed, total, f"Waiting for a person: {label[:200]}")

    await tick(0, wait_s)
    outcomes = await box.decisions.wait_all(handles, wait_s, tick)
    return [
        outcome_result(o) if o is not None else pending_result(h, wait_s)
        for h, o in outcomes.items()
    ]
