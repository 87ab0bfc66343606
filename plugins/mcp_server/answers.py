"""Waiting for a person's answer, and the tool that collects it later: get_decision.

An asking tool blocks until a person answers, sending a progress notification every few
seconds, up to a bounded wait; then it returns a pending handle instead (``decisions.py``
says why). Clients must pass a progress callback, or their own read timeout ends a long
wait first; the default wait stays below the common five minutes.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from plugins.mcp_server.decisions import (
    Cancelled,
    cancelled_result,
    decision_result,
    pending_result,
)
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


async def wait_for(handle: str, title: str, wait: float | None, ctx: ToolContext) -> dict[str, Any]:
    """What a tool returns for ``handle``: the answer, a cancellation, or, once ``wait``
    seconds (default: the server's setting) pass unanswered, the pending handle again."""
    box = toolbox_of(ctx)
    wait_s = box.wait_s if wait is None else wait

    async def tick(elapsed: float, total: float) -> None:
        await ctx.report_progress(elapsed, total, f"Waiting for a person: {title}")

    await tick(0, wait_s)
    answer = await box.decisions.wait(handle, wait_s, tick)
    if isinstance(answer, Cancelled):
        return cancelled_result(answer)
    return decision_result(answer) if answer else pending_result(handle, wait_s)


async def get_decision(
    handle: Annotated[str, Field(description="The handle a pending asking tool returned.")],
    ctx: ToolContext,
    wait_seconds: WaitSeconds = None,
) -> dict[str, Any]:
    """Collect the person's answer to an earlier request, waiting up to wait_seconds.

    Returns the same shape as the asking tool would have: status 'decided' with the
    answer, or status 'pending' again.
    """
    asked = toolbox_of(ctx).decisions.pending.get(handle)
    return await wait_for(handle, asked.card.title if asked else handle, wait_seconds, ctx)
