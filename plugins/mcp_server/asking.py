"""The tools that ask a person: approval, choice, input and review, and approvals in a batch.

Each sends an interaction card and waits for the answer, up to a bounded wait; then it
returns a pending handle that get_decision collects later (``answers.py``). Every asking
tool takes a policy (who may answer, a quorum, an expiry and what it decides); the hub
checks it as it checks any agent's (an expiry may approve only on the risks the workspace
allows), so a tool call cannot grant itself more than the people allowed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import InputRequiredResult
from pydantic import BaseModel, Field, ValidationError

from hub.protocol.interactions import (
    MAX_APPROVERS,
    MAX_POLICY_DELAY_S,
    ApprovalPolicy,
    InputFormat,
    InputSpec,
    InteractionCard,
    InteractionType,
)
from hub.protocol.interactions import Option as CardOption
from plugins.mcp_server.answers import WaitSeconds
from plugins.mcp_server.results import Decision
from plugins.mcp_server.terminal import ask_and_settle
from plugins.mcp_server.toolbox import TaskId, ToolContext


class Choice(BaseModel):
    id: Annotated[
        str, Field(pattern=r"^[\w.:-]{1,64}$", description="Short stable id, e.g. 'rollback'.")
    ]
    label: Annotated[str, Field(min_length=1, max_length=200, description="Button text.")]
    description: Annotated[
        str | None, Field(None, max_length=1000, description="One line on what it means.")
    ] = None


class Policy(BaseModel):
    """Who must answer, and what the hub decides while nobody does."""

    approvers: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=320)]],
        Field(
            default_factory=list,
            max_length=MAX_APPROVERS,
            description="Who may answer, by email or user id; empty: every member who may.",
        ),
    ]
    quorum: Annotated[
        int | None,
        Field(
            None,
            ge=1,
            le=MAX_APPROVERS,
            description="How many approvals decide (approvals and reviews only); the first "
            "rejection decides at once. Leave out: the first answer decides.",
        ),
    ] = None
    expires_in_seconds: Annotated[
        int | None,
        Field(
            None,
            ge=1,
            le=MAX_POLICY_DELAY_S,
            description="After this long unanswered the card expires and on_expiry decides.",
        ),
    ] = None
    on_expiry: Annotated[
        Literal["deny", "approve", "expire"] | None,
        Field(
            None,
            description="What expiry decides: 'deny', 'approve' (only on the risks the "
            "workspace allows) or 'expire' (nothing decided). Leave out: deny for a "
            "high-risk card, expire otherwise.",
        ),
    ] = None


PolicyArgument = Annotated[
    Policy | None,
    Field(None, description="Who must answer and what happens while nobody does."),
]


class ActionToApprove(BaseModel):
    """Exactly what will be done once approved (the hub's ProposedAction, described for a
    model to read): every surface shows its fields, and the person may edit the editable
    ones."""

    kind: Annotated[
        str,
        Field(
            min_length=1,
            max_length=100,
            description="What kind of action, e.g. 'shell.command' or 'db.migration'.",
        ),
    ]
    fields: Annotated[
        dict[str, Any],
        Field(default_factory=dict, description="Everything the action will do, by field."),
    ]
    editable: Annotated[
        list[str],
        Field(
            default_factory=list,
            max_length=50,
            description="The fields the person may change before approving.",
        ),
    ]


Why = Annotated[str, Field("", max_length=10_000, description="Why you need the person.")]
Details = Annotated[
    dict[str, Any] | None,
    Field(None, description="Extra facts shown collapsed, e.g. the exact command or diff stats."),
]


async def request_approval(
    action: Annotated[
        str,
        Field(
            min_length=1,
            max_length=300,
            description="What you want to do, as a question or command, e.g. "
            "'Run the orders table migration on production'.",
        ),
    ],
    ctx: ToolContext,
    impact: Annotated[
        str, Field("", max_length=10_000, description="What changes, for whom, reversible?")
    ] = "",
    risk: Annotated[
        Literal["low", "medium", "high"] | None,
        Field(None, description="Your honest risk estimate; 'high' asks for a confirmation."),
    ] = None,
    why: Why = "",
    options: Annotated[
        list[Choice] | None,
        Field(
            None,
            description="Custom buttons; default Approve (id 'approve') and Reject "
            "(id 'reject'). Keep an 'approve' option: it is what `approved` reports.",
        ),
    ] = None,
    details: Details = None,
    exact_action: Annotated[
        ActionToApprove | None,
        Field(
            None,
            description="The exact action, e.g. {kind: 'shell.command', fields: {command: "
            "'alembic upgrade head', cwd: '/srv/app'}, editable: ['command']}. The person "
            "sees every field and may change the editable ones before approving.",
        ),
    ] = None,
    policy: PolicyArgument = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> Decision | InputRequiredResult:
    """Ask the person to approve an action before you take it, and wait for the decision.

    Returns status 'decided' with approved (true only for the approve option),
    optionId, comment, decidedBy, via (web, email, telegram, ...) and decidedAt (and
    votes, on a quorum); or status 'pending' with a handle for get_decision. Do not act
    unless approved.
    With exact_action, the decision also holds action (the approved action, perhaps
    edited by the person), actionHash and, if edited, editedFrom: do exactly
    action.fields, nothing else; for anything different, ask again.
    """
    card = {
        "type": InteractionType.APPROVAL,
        "title": action,
        "description": why,
        "impact": impact,
        "risk": risk,
        "options": _options(options),
        "details": details or {},
        "action": exact_action.model_dump() if exact_action else None,
    }
    return await _ask(with_policy(card, policy), task_id, wait_seconds, ctx)


async def ask_choice(
    question: Annotated[
        str, Field(min_length=1, max_length=300, description="What the person is to pick.")
    ],
    options: Annotated[
        list[Choice], Field(min_length=2, max_length=5, description="2 to 5 options.")
    ],
    ctx: ToolContext,
    multiple: Annotated[bool, Field(description="Let the person pick several.")] = False,
    min_selections: Annotated[
        int | None,
        Field(None, ge=0, le=5, description="With multiple: the fewest they may pick (1)."),
    ] = None,
    max_selections: Annotated[
        int | None,
        Field(None, ge=1, le=5, description="With multiple: the most they may pick (all)."),
    ] = None,
    why: Why = "",
    details: Details = None,
    policy: PolicyArgument = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> Decision | InputRequiredResult:
    """Ask the person to pick one option (or several with multiple=true) and wait.

    Returns status 'decided' with optionId (or optionIds when multiple), decidedBy, via
    and decidedAt; or status 'pending' with a handle for get_decision.
    """
    if (min_selections is not None or max_selections is not None) and not multiple:
        raise ToolError(
            "invalid_card: min_selections and max_selections apply to a multiple choice; "
            "set multiple to true, or leave them out."
        )
    card: dict[str, Any] = {
        "type": InteractionType.CHOICE,
        "title": question,
        "description": why,
        "options": _options(options),
        "multiple": multiple,
        "details": details or {},
    }
    if min_selections is not None:
        card["minSelections"] = min_selections
    if max_selections is not None:
        card["maxSelections"] = max_selections
    return await _ask(with_policy(card, policy), task_id, wait_seconds, ctx)


async def ask_input(
    question: Annotated[
        str, Field(min_length=1, max_length=300, description="What the person is to type.")
    ],
    ctx: ToolContext,
    format: Annotated[
        Literal["text", "url", "email", "number", "pattern"],
        Field(description="What the answer must look like; checked before it reaches you."),
    ] = "text",
    pattern: Annotated[
        str | None, Field(None, description="A regular expression, with format 'pattern'.")
    ] = None,
    placeholder: Annotated[
        str | None, Field(None, max_length=200, description="An example of the answer.")
    ] = None,
    multiline: Annotated[bool, Field(description="Several lines of text, not one.")] = False,
    sensitive: Annotated[
        bool, Field(description="A secret: never shown in notifications.")
    ] = False,
    why: Why = "",
    policy: PolicyArgument = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> Decision | InputRequiredResult:
    """Ask the person to type a value (a version, an address, a URL, ...) and wait.

    Returns status 'decided' with text, decidedBy, via and decidedAt; or status
    'pending' with a handle for get_decision.
    """
    spec = {
        "format": InputFormat(format),
        "pattern": pattern,
        "placeholder": placeholder,
        "multiline": multiline,
        "sensitive": sensitive,
    }
    try:
        input_spec = InputSpec.model_validate(spec)
    except ValidationError as error:
        raise ToolError(f"invalid_input_format: {error.errors()[0]['msg']}") from None
    card = {
        "type": InteractionType.INPUT,
        "title": question,
        "description": why,
        "input": input_spec,
    }
    return await _ask(with_policy(card, policy), task_id, wait_seconds, ctx)


async def request_review(
    title: Annotated[
        str, Field(min_length=1, max_length=300, description="What is to be reviewed.")
    ],
    ctx: ToolContext,
    content: Annotated[
        str | None,
        Field(None, max_length=200_000, description="The text to review (a diff, a draft)."),
    ] = None,
    artifact_url: Annotated[
        str | None, Field(None, max_length=2000, description="Or a link to what to review.")
    ] = None,
    why: Why = "",
    policy: PolicyArgument = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> Decision | InputRequiredResult:
    """Ask the person to review content or an artifact, and wait for the verdict.

    Returns status 'decided' with approved (true for 'approve', false for
    'request_changes'), comment (what to change), decidedBy, via and decidedAt; or
    status 'pending' with a handle for get_decision.
    """
    if not content and not artifact_url:
        raise ToolError("nothing_to_review: pass content, artifact_url, or both.")
    card = {
        "type": InteractionType.REVIEW,
        "title": title,
        "description": why,
        "content": content,
        "contentUrl": artifact_url,
    }
    return await _ask(with_policy(card, policy), task_id, wait_seconds, ctx)


ASKING_TOOLS = (request_approval, ask_choice, ask_input, request_review)


async def _ask(
    card: dict[str, Any], task_id: str | None, wait: float | None, ctx: ToolContext
) -> Decision | InputRequiredResult:
    """Send ``card`` (taking on its task, if any) and wait for the person's answer."""
    settled = await ask_and_settle([valid_card(card)], task_id, wait, ctx)
    return settled if isinstance(settled, InputRequiredResult) else settled[0]


def valid_card(card: dict[str, Any]) -> InteractionCard:
    try:
        return InteractionCard.model_validate(card)
    except ValidationError as error:
        raise ToolError(f"invalid_card: {problems(error, 'card')}") from None


def with_policy(card: dict[str, Any], policy: Policy | None) -> dict[str, Any]:
    """``card`` with the hub's policy and expiry for the tool's ``policy``."""
    if policy is None:
        return card
    if policy.on_expiry is not None and policy.expires_in_seconds is None:
        raise ToolError(
            "invalid_policy: on_expiry needs expires_in_seconds (when the card expires)."
        )
    if policy.expires_in_seconds is not None:
        expiry = datetime.now(UTC) + timedelta(seconds=policy.expires_in_seconds)
        card = {**card, "expiresAt": expiry}
    if policy.approvers or policy.quorum is not None or policy.on_expiry is not None:
        try:
            hub_policy = ApprovalPolicy(
                mode="quorum" if policy.quorum is not None else "any",
                approvers=policy.approvers,
                required=policy.quorum or 1,
                on_expiry=policy.on_expiry,
            )
        except ValidationError as error:
            raise ToolError(f"invalid_policy: {problems(error, 'policy')}") from None
        card = {**card, "policy": hub_policy}
    return card


def problems(error: ValidationError, what: str) -> str:
    """Each problem pydantic found, where it is and what is wrong, on one line."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or what}: {e['msg']}" for e in error.errors())


def _options(options: list[Choice] | None) -> list[dict[str, Any]]:
    return [CardOption(**o.model_dump()).wire() for o in options or []]
