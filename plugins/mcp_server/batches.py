"""Several approvals of one task asked together: request_approvals.

The person sees them together wherever they are: the task's page offers "approve all",
"reject all" or a choice per item, Telegram a batch message, the terminal one form (when
the client can show one). Each item is still its own card, decided on its own and returned
as its own decision; asking them in one call only saves the agent a round trip per item and
lets the person answer in one go.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp_types import InputRequiredResult
from pydantic import BaseModel, Field

from hub.protocol.interactions import InteractionType
from plugins.mcp_server.answers import WaitSeconds
from plugins.mcp_server.asking import (
    ActionToApprove,
    Details,
    PolicyArgument,
    Why,
    valid_card,
    with_policy,
)
from plugins.mcp_server.results import BatchDecision
from plugins.mcp_server.terminal import ask_and_settle
from plugins.mcp_server.toolbox import ToolContext

# A person reads each item before deciding; past this many, ask in several batches.
MAX_ITEMS = 20


class ApprovalItem(BaseModel):
    """One action of the batch, with the Approve / Reject options of an approval."""

    action: Annotated[str, Field(min_length=1, max_length=300, description="What you want to do.")]
    impact: Annotated[
        str, Field("", max_length=10_000, description="What changes, for whom, reversible?")
    ] = ""
    risk: Annotated[
        Literal["low", "medium", "high"] | None,
        Field(None, description="Your honest risk estimate; 'high' asks for a confirmation."),
    ] = None
    why: Why = ""
    details: Details = None
    exact_action: Annotated[
        ActionToApprove | None,
        Field(None, description="The exact action, as for request_approval."),
    ] = None


async def request_approvals(
    items: Annotated[
        list[ApprovalItem],
        Field(min_length=2, max_length=MAX_ITEMS, description="The actions, 2 to 20."),
    ],
    task_id: Annotated[
        str,
        Field(
            description="The task they belong to (start_task first): the person decides "
            "a task's approvals together."
        ),
    ],
    ctx: ToolContext,
    policy: PolicyArgument = None,
    wait_seconds: WaitSeconds = None,
) -> BatchDecision | InputRequiredResult:
    """Ask the person to approve several actions of one task at once, and wait for them.

    The person may approve all, reject all, or decide each. Returns status 'decided' with
    one decision per item, in order (approved true only for approve); or status 'pending'
    when some have no answer yet: collect those with get_decision and their handles. Act
    only on the items approved.
    """
    cards = [valid_card(with_policy(_card(item), policy)) for item in items]
    decisions = await ask_and_settle(cards, task_id, wait_seconds, ctx)
    if isinstance(decisions, InputRequiredResult):
        return decisions
    pending = any(d["status"] == "pending" for d in decisions)
    return {"status": "pending" if pending else "decided", "items": decisions}


def _card(item: ApprovalItem) -> dict[str, Any]:
    return {
        "type": InteractionType.APPROVAL,
        "title": item.action,
        "description": item.why,
        "impact": item.impact,
        "risk": item.risk,
        "details": item.details or {},
        "action": item.exact_action.model_dump() if item.exact_action else None,
    }
