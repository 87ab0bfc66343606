"""The tools that show the person the agent's work: tasks, messages, artifacts.

Tasks come from two places: a person assigns one in the hub (it arrives as a downlink and
is listed in ``lineup://tasks/open``), or the agent starts one with ``start_task``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from plugins.mcp_server.results import ArtifactAdded, MessagePosted, TaskView
from plugins.mcp_server.toolbox import TaskId, ToolContext, checked, task_of, toolbox_of


async def start_task(
    title: Annotated[
        str, Field(min_length=1, max_length=500, description="What the task is, in a line.")
    ],
    ctx: ToolContext,
    description: Annotated[
        str, Field("", max_length=10_000, description="More about it, for the person.")
    ] = "",
    task_id: Annotated[
        str | None,
        Field(None, description="Start a task a person assigned to you, instead of a new one."),
    ] = None,
    conversation_id: Annotated[
        str | None, Field(None, description="Conversation the task belongs to, if any.")
    ] = None,
) -> TaskView:
    """Show the person a task you are working on; returns its taskId (status running).

    Use its taskId with report_progress, finish_task and the asking tools.
    """
    box = toolbox_of(ctx)
    if task_id:
        task = task_of(box, task_id)
        await checked(box.worklog.accept(task))
    else:
        task = await checked(box.worklog.start(title, description, conversation_id))
    return task.wire()


async def report_progress(
    task_id: Annotated[str, Field(description="The task's id.")],
    summary: Annotated[
        str, Field(min_length=1, max_length=2000, description="One line: where you are.")
    ],
    ctx: ToolContext,
    percent: Annotated[
        int | None, Field(None, ge=0, le=100, description="How far along, 0 to 100.")
    ] = None,
) -> TaskView:
    """Tell the person how a running task is going."""
    box = toolbox_of(ctx)
    task = task_of(box, task_id)
    await checked(box.worklog.report(task, "running", progress=percent, summary=summary))
    return task.wire()


async def finish_task(
    task_id: Annotated[str, Field(description="The task's id.")],
    ctx: ToolContext,
    outcome: Annotated[
        Literal["succeeded", "failed", "cancelled"], Field(description="How it ended.")
    ] = "succeeded",
    summary: Annotated[
        str | None, Field(None, max_length=2000, description="One line on how it ended.")
    ] = None,
    error: Annotated[
        str | None, Field(None, max_length=10_000, description="What went wrong, if failed.")
    ] = None,
) -> TaskView:
    """End a task: succeeded, failed (say why in error) or cancelled."""
    box = toolbox_of(ctx)
    task = task_of(box, task_id)
    progress = 100 if outcome == "succeeded" else None
    await checked(
        box.worklog.report(task, outcome, progress=progress, summary=summary, error=error)
    )
    return task.wire()


async def post_message(
    content: Annotated[
        str, Field(min_length=1, max_length=200_000, description="The message (plain text).")
    ],
    ctx: ToolContext,
    task_id: TaskId = None,
    conversation_id: Annotated[
        str | None,
        Field(None, description="The conversation to write to; default: the task's."),
    ] = None,
) -> MessagePosted:
    """Write a message to the person in a conversation (the task's, if you name a task)."""
    box = toolbox_of(ctx)
    conversation = conversation_id
    if task_id and not conversation:
        conversation = task_of(box, task_id).conversation_id
    if not conversation:
        raise ToolError(
            "conversation_required: this task has no conversation. Name a "
            "conversation_id, or use report_progress to tell the person how a task goes."
        )
    message_id = await checked(
        box.agent.post_message(conversation, content, task_id=task_id or None)
    )
    return {"messageId": message_id, "conversationId": conversation}


async def add_artifact(
    name: Annotated[
        str, Field(min_length=1, max_length=500, description="What the result is called.")
    ],
    url: Annotated[
        str, Field(min_length=1, max_length=2000, description="Where the result lives.")
    ],
    ctx: ToolContext,
    task_id: TaskId = None,
    mime_type: Annotated[
        str | None, Field(None, max_length=200, description="Its media type, if known.")
    ] = None,
    summary: Annotated[
        str | None, Field(None, max_length=2000, description="One line on what it holds.")
    ] = None,
) -> ArtifactAdded:
    """Attach a result (a report, a build, a pull request) to a task for the person."""
    box = toolbox_of(ctx)
    artifact_id = await checked(
        box.agent.add_artifact(
            name, url, task_id=task_id or None, mime_type=mime_type, summary=summary
        )
    )
    return {"artifactId": artifact_id, "taskId": task_id}


WORK_TOOLS = (start_task, report_progress, finish_task, post_message, add_artifact)
