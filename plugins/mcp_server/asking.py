"""The tools that ask a person: approval, choice, input and review.

Each sends an interaction card and waits for the answer, up to a bounded wait; then it
returns a pending handle that get_decision collects later (``answers.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from hub.protocol.actions import ProposedAction
from hub.protocol.interactions import InputFormat, InputSpec, InteractionCard, InteractionType
from hub.protocol.interactions import Option as CardOption
from plugins.mcp_server.answers import WaitSeconds, wait_for
from plugins.mcp_server.toolbox import TaskId, ToolContext, checked, task_of, toolbox_of


class Choice(BaseModel):
    id: Annotated[
        str, Field(pattern=r"^[\w.:-]{1,64}$", description="Short stable id, e.g. 'rollback'.")
    ]
    label: Annotated[str, Field(min_length=1, max_length=200, description="Button text.")]
    description: Annotated[
        str | None, Field(None, max_length=1000, description="One line on what it means.")
    ] = None


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
        ProposedAction | None,
        Field(
            None,
            description="The exact action, e.g. {kind: 'shell.command', fields: {command: "
            "'alembic upgrade head', cwd: '/srv/app'}, editable: ['command']}. The person "
            "sees every field and may change the editable ones before approving.",
        ),
    ] = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> dict[str, Any]:
    """Ask the person to approve an action before you take it, and wait for the decision.

    Returns status 'decided' with approved (true only for the approve option),
    optionId, comment, decidedBy, via (web, email, telegram, ...) and decidedAt; or
    status 'pending' with a handle for get_decision. Do not act unless approved.
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
        "action": exact_action.wire() if exact_action else None,
    }
    return await _ask(card, task_id, wait_seconds, ctx)


async def ask_choice(
    question: Annotated[str, Field(min_length=1, max_length=300)],
    options: Annotated[
        list[Choice], Field(min_length=2, max_length=5, description="2 to 5 options.")
    ],
    ctx: ToolContext,
    multiple: Annotated[bool, Field(description="Let the person pick several.")] = False,
    why: Why = "",
    details: Details = None,
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> dict[str, Any]:
    """Ask the person to pick one option (or several with multiple=true) and wait.

    Returns status 'decided' with optionId (or optionIds when multiple), decidedBy, via
    and decidedAt; or status 'pending' with a handle for get_decision.
    """
    card = {
        "type": InteractionType.CHOICE,
        "title": question,
        "description": why,
        "options": _options(options),
        "multiple": multiple,
        "details": details or {},
    }
    return await _ask(card, task_id, wait_seconds, ctx)


async def ask_input(
    question: Annotated[str, Field(min_length=1, max_length=300)],
    ctx: ToolContext,
    format: Annotated[
        Literal["text", "url", "email", "number", "pattern"],
        Field(description="What the answer must look like; checked before it reaches you."),
    ] = "text",
    pattern: Annotated[
        str | None, Field(None, description="A regular expression, with format 'pattern'.")
    ] = None,
    placeholder: Annotated[str | None, Field(None, max_length=200)] = None,
    multiline: bool = False,
    sensitive: Annotated[
        bool, Field(description="A secret: never shown in notifications.")
    ] = False,
    why: Why = "",
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> dict[str, Any]:
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
    return await _ask(card, task_id, wait_seconds, ctx)


async def request_review(
    title: Annotated[str, Field(min_length=1, max_length=300)],
    ctx: ToolContext,
    content: Annotated[
        str | None,
        Field(None, max_length=200_000, description="The text to review (a diff, a draft)."),
    ] = None,
    artifact_url: Annotated[
        str | None, Field(None, max_length=2000, description="Or a link to what to review.")
    ] = None,
    why: Why = "",
    task_id: TaskId = None,
    wait_seconds: WaitSeconds = None,
) -> dict[str, Any]:
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
    return await _ask(card, task_id, wait_seconds, ctx)


ASKING_TOOLS = (request_approval, ask_choice, ask_input, request_review)


async def _ask(
    card: dict[str, Any], task_id: str | None, wait: float | None, ctx: ToolContext
) -> dict[str, Any]:
    """Send ``card`` (taking on its task, if any) and wait for the person's answer."""
    box = toolbox_of(ctx)
    validated = _valid_card(card)
    if task_id:
        await checked(box.worklog.accept(task_of(box, task_id)))
    handle = await checked(box.decisions.ask(validated, task_id))
    return await wait_for(handle, validated.title, wait, ctx)


def _valid_card(card: dict[str, Any]) -> InteractionCard:
    try:
        return InteractionCard.model_validate(card)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'card'}: {e['msg']}" for e in error.errors()
        )
        raise ToolError(f"invalid_card: {problems}") from None


def _options(options: list[Choice] | None) -> list[dict[str, Any]]:
    return [CardOption(**o.model_dump()).wire() for o in options or []]
