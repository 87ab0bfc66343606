"""The MCP tools and resources, bound to one hub agent.

Every tool is a thin translation: arguments become an interaction card or an uplink sent
through the SDK (kept and resent until the hub acknowledges it), the hub's refusal becomes
a tool error the model can read (what went wrong and what to do instead). The same server
is built for ``lineup mcp`` on stdio and for each credential on the hub's ``/mcp/``.

Asking tools block until a person answers, sending a progress notification every few
seconds, up to a bounded wait; then they return a pending handle instead (see
``decisions.py`` for why). Clients must pass a progress callback, or their own read timeout
ends a long wait first; the wait's default is below the common five minutes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from hub.protocol.interactions import InputFormat, InputSpec, InteractionCard, InteractionType
from hub.protocol.interactions import Option as CardOption
from hub.sdk import Agent, HubError
from plugins.mcp_server.decisions import (
    PROGRESS_EVERY_S,
    Decisions,
    decision_result,
    pending_result,
)
from plugins.mcp_server.worklog import TrackedTask, Worklog

INSTRUCTIONS = """\
You are connected to LineUp Hub, where the person supervising you sees your work and
answers your questions on the web, by email or in Telegram. Before anything risky or
irreversible (deleting data, deploying, spending money, running migrations), call
request_approval and obey the answer: only `approved: true` means go ahead. Use ask_choice
or ask_input when you need a decision or a value only the person has, and request_review
to have a result checked. Asking tools wait for the answer; if they return
`status: pending`, continue with something else and call get_decision with the handle later.
For longer work, start_task, report_progress as you go, and finish_task at the end, so the
person can follow along."""


class Choice(BaseModel):
    id: Annotated[
        str, Field(pattern=r"^[\w.:-]{1,64}$", description="Short stable id, e.g. 'rollback'.")
    ]
    label: Annotated[str, Field(min_length=1, max_length=200, description="Button text.")]
    description: Annotated[
        str | None, Field(None, max_length=1000, description="One line on what it means.")
    ] = None


@dataclass
class Toolbox:
    """One hub agent as the tools see it."""

    agent: Agent
    decisions: Decisions
    worklog: Worklog
    wait_s: float

    @classmethod
    def for_agent(
        cls, agent: Agent, wait_s: float, progress_every_s: float = PROGRESS_EVERY_S
    ) -> Toolbox:
        """Call before the agent starts, so no downlink passes before the handlers exist."""
        return cls(agent, Decisions(agent, progress_every_s), Worklog(agent), wait_s)


TaskId = Annotated[
    str | None,
    Field(None, description="The task this is about (from start_task or the open-tasks resource)."),
]
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
Why = Annotated[str, Field("", max_length=10_000, description="Why you need the person.")]
Details = Annotated[
    dict[str, Any] | None,
    Field(None, description="Extra facts shown collapsed, e.g. the exact command or diff stats."),
]


def build_server(box: Toolbox, name: str = "lineup") -> MCPServer:
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")

    async def ask(
        card: dict[str, Any], task_id: str | None, wait: float | None, ctx: Context
    ) -> Any:
        try:
            validated = InteractionCard.model_validate(card)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'card'}: {e['msg']}" for e in error.errors()
            )
            raise ToolError(f"invalid_card: {problems}") from None
        if task_id:
            await _checked(box.worklog.accept(_task(box, task_id)))
        handle = await _checked(box.decisions.ask(validated, task_id))
        return await wait_for(handle, validated.title, wait, ctx)

    async def wait_for(handle: str, title: str, wait: float | None, ctx: Context) -> Any:
        wait_s = box.wait_s if wait is None else wait

        async def tick(elapsed: float, total: float) -> None:
            await ctx.report_progress(elapsed, total, f"Waiting for a person: {title}")

        await tick(0, wait_s)
        answer = await box.decisions.wait(handle, wait_s, tick)
        return decision_result(answer) if answer else pending_result(handle, wait_s)

    @server.tool()
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
        ctx: Context,
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
        task_id: TaskId = None,
        wait_seconds: WaitSeconds = None,
    ) -> dict[str, Any]:
        """Ask the person to approve an action before you take it, and wait for the decision.

        Returns status 'decided' with approved (true only for the approve option),
        optionId, comment, decidedBy, via (web, email, telegram, ...) and decidedAt; or
        status 'pending' with a handle for get_decision. Do not act unless approved.
        """
        card = {
            "type": InteractionType.APPROVAL,
            "title": action,
            "description": why,
            "impact": impact,
            "risk": risk,
            "options": _options(options),
            "details": details or {},
        }
        return await ask(card, task_id, wait_seconds, ctx)  # type: ignore[no-any-return]

    @server.tool()
    async def ask_choice(
        question: Annotated[str, Field(min_length=1, max_length=300)],
        options: Annotated[
            list[Choice], Field(min_length=2, max_length=5, description="2 to 5 options.")
        ],
        ctx: Context,
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
        return await ask(card, task_id, wait_seconds, ctx)  # type: ignore[no-any-return]

    @server.tool()
    async def ask_input(
        question: Annotated[str, Field(min_length=1, max_length=300)],
        ctx: Context,
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
        return await ask(card, task_id, wait_seconds, ctx)  # type: ignore[no-any-return]

    @server.tool()
    async def request_review(
        title: Annotated[str, Field(min_length=1, max_length=300)],
        ctx: Context,
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
        return await ask(card, task_id, wait_seconds, ctx)  # type: ignore[no-any-return]

    @server.tool()
    async def get_decision(
        handle: Annotated[str, Field(description="The handle a pending asking tool returned.")],
        ctx: Context,
        wait_seconds: WaitSeconds = None,
    ) -> dict[str, Any]:
        """Collect the person's answer to an earlier request, waiting up to wait_seconds.

        Returns the same shape as the asking tool would have: status 'decided' with the
        answer, or status 'pending' again.
        """
        asked = box.decisions.pending.get(handle)
        return await wait_for(handle, asked.card.title if asked else handle, wait_seconds, ctx)  # type: ignore[no-any-return]

    @server.tool()
    async def start_task(
        title: Annotated[str, Field(min_length=1, max_length=500)],
        description: Annotated[str, Field("", max_length=10_000)] = "",
        task_id: Annotated[
            str | None,
            Field(None, description="Start a task a person assigned to you, instead of a new one."),
        ] = None,
        conversation_id: Annotated[
            str | None, Field(None, description="Conversation the task belongs to, if any.")
        ] = None,
    ) -> dict[str, Any]:
        """Show the person a task you are working on; returns its taskId (status running).

        Use its taskId with report_progress, finish_task and the asking tools.
        """
        if task_id:
            task = _task(box, task_id)
            await _checked(box.worklog.accept(task))
        else:
            task = await _checked(box.worklog.start(title, description, conversation_id))
        return task.wire()

    @server.tool()
    async def report_progress(
        task_id: Annotated[str, Field(description="The task's id.")],
        summary: Annotated[
            str, Field(min_length=1, max_length=2000, description="One line: where you are.")
        ],
        percent: Annotated[int | None, Field(None, ge=0, le=100)] = None,
    ) -> dict[str, Any]:
        """Tell the person how a running task is going."""
        task = _task(box, task_id)
        await _checked(box.worklog.report(task, "running", progress=percent, summary=summary))
        return task.wire()

    @server.tool()
    async def finish_task(
        task_id: Annotated[str, Field(description="The task's id.")],
        outcome: Annotated[
            Literal["succeeded", "failed", "cancelled"], Field(description="How it ended.")
        ] = "succeeded",
        summary: Annotated[str | None, Field(None, max_length=2000)] = None,
        error: Annotated[
            str | None, Field(None, max_length=10_000, description="What went wrong, if failed.")
        ] = None,
    ) -> dict[str, Any]:
        """End a task: succeeded, failed (say why in error) or cancelled."""
        task = _task(box, task_id)
        progress = 100 if outcome == "succeeded" else None
        await _checked(
            box.worklog.report(task, outcome, progress=progress, summary=summary, error=error)
        )
        return task.wire()

    @server.tool()
    async def post_message(
        content: Annotated[str, Field(min_length=1, max_length=200_000)],
        task_id: TaskId = None,
        conversation_id: Annotated[str | None, Field(None)] = None,
    ) -> dict[str, Any]:
        """Write a message to the person in a conversation (the task's, if you name a task)."""
        conversation = conversation_id
        if task_id and not conversation:
            conversation = _task(box, task_id).conversation_id
        if not conversation:
            raise ToolError(
                "conversation_required: this task has no conversation. Name a "
                "conversation_id, or use report_progress to tell the person how a task goes."
            )
        message_id = await _checked(
            box.agent.post_message(conversation, content, task_id=task_id or None)
        )
        return {"messageId": message_id, "conversationId": conversation}

    @server.tool()
    async def add_artifact(
        name: Annotated[str, Field(min_length=1, max_length=500)],
        url: Annotated[
            str, Field(min_length=1, max_length=2000, description="Where the result lives.")
        ],
        task_id: TaskId = None,
        mime_type: Annotated[str | None, Field(None, max_length=200)] = None,
        summary: Annotated[str | None, Field(None, max_length=2000)] = None,
    ) -> dict[str, Any]:
        """Attach a result (a report, a build, a pull request) to a task for the person."""
        artifact_id = await _checked(
            box.agent.add_artifact(
                name, url, task_id=task_id or None, mime_type=mime_type, summary=summary
            )
        )
        return {"artifactId": artifact_id, "taskId": task_id}

    @server.resource(
        "lineup://tasks/open",
        name="open-tasks",
        description="Tasks this agent is working on or was assigned and has not finished.",
        mime_type="application/json",
    )
    def open_tasks() -> str:
        return json.dumps([task.wire() for task in box.worklog.open_tasks()])

    @server.resource(
        "lineup://interactions/pending",
        name="pending-interactions",
        description="Requests this agent made that nobody has answered yet (their handles).",
        mime_type="application/json",
    )
    def pending_interactions() -> str:
        return json.dumps([asked.summary() for asked in box.decisions.pending.values()])

    return server


def _options(options: list[Choice] | None) -> list[dict[str, Any]]:
    return [CardOption(**o.model_dump()).wire() for o in options or []]


def _task(box: Toolbox, task_id: str) -> TrackedTask:
    task = box.worklog.tasks.get(task_id)
    if task is None:
        raise ToolError(
            f"unknown_task: {task_id} is not one of this agent's tasks. Read the "
            "lineup://tasks/open resource, or start_task first."
        )
    return task


async def _checked(step: Any) -> Any:
    """Await ``step``; the hub's refusal becomes a tool error the model can act on."""
    try:
        return await step
    except HubError as error:
        raise ToolError(f"{error.code}: {error.message} {error.hint}".strip()) from None
