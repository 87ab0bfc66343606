"""What an event's actor may write to: an agent only to its own tasks and its conversations.

An agent's task is one assigned to it; the tasks it starts (``task.created``) and the child
tasks of its tasks are assigned to it too, so "assigned to it" is the one test. Its
conversations are the ones it is a member of, and the conversation of one of its tasks.
People and the hub itself are held to the workspace only.

Every handler that writes to a task or a conversation an event names asks here, inside the
append transaction, so an event an agent may not write is refused whole and nothing of it
is stored, whichever uplink carried it.
"""

from __future__ import annotations

from hub.core.errors import Forbidden, InvalidInput, NotFound
from hub.core.log import bulk_inserts
from hub.core.log.handlers import Connection
from hub.core.store.models import Conversation, Event, Task


def actor_agent_id(actor: str) -> str | None:
    kind, _, ident = actor.partition(":")
    return ident if kind == "agent" else None


async def writable_task(event: Event, connection: Connection, task_id: str | None) -> Task:
    """The task ``task_id`` of the event's workspace, locked, if the actor may write to it."""
    if not task_id:
        raise InvalidInput("The event names no task: set 'taskId'.")
    task = (
        await Task.filter(id=task_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .select_for_update()
        .first()
    )
    if task is None:
        raise NotFound(f"Task {task_id} does not exist in this workspace.", code="task_not_found")
    agent_id = actor_agent_id(event.actor)
    if agent_id is not None and task.target_agent_id != agent_id:
        raise Forbidden(
            f"Task {task_id} is assigned to another agent.",
            hint="An agent may only report on its own tasks.",
            code="task_not_yours",
        )
    return task


async def check_conversation(
    event: Event, connection: Connection, conversation_id: str, task: Task | None = None
) -> None:
    """Refuse an agent's event in a conversation it is not part of.

    ``task`` is the (writable) task the event is about: its own conversation is open to its
    agent even when a person left the agent out of the conversation's members. A
    conversation is checked once per agent and group commit: its members never change.
    """
    agent_id = actor_agent_id(event.actor)
    if agent_id is None or (task is not None and task.conversation_id == conversation_id):
        return
    if not bulk_inserts.once(("agent in conversation", agent_id, conversation_id)):
        return  # checked already in this batch (a refusal would have ended the batch's try)
    members = (
        await Conversation.filter(id=conversation_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .first()
        .values_list("agent_ids", flat=True)
    )
    if members is None:
        raise NotFound(
            f"Conversation {conversation_id} does not exist in this workspace.",
            code="conversation_not_found",
        )
    if agent_id not in (members or []):
        raise Forbidden(
            f"This agent is not part of conversation {conversation_id}.",
            code="conversation_not_yours",
            hint="Write in a conversation the agent belongs to, or name only the task "
            "(taskId): its message then goes to the task's conversation.",
        )


__all__ = ["actor_agent_id", "check_conversation", "writable_task"]
