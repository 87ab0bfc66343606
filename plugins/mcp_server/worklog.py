"""The tasks this MCP agent works on: the ones a person assigned, the ones it started.

An MCP client has no handler waiting for ``task.assigned``: the LLM finds its work by
reading the open-tasks resource, then reports on a task with the task tools. Reports get
fresh envelope ids (each tool call is a new step, never a replay of an earlier one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.sdk import Agent, Downlink
from hub.sdk.ids import new_id
from hub.sdk.task import TERMINAL
from plugins.mcp_server.results import TaskView


@dataclass
class TrackedTask:
    id: str
    title: str
    description: str
    status: str
    conversation_id: str | None
    started_by: str  # "person" (assigned in the hub) or "agent" (start_task)
    progress: int | None = None
    summary: str | None = None
    cancel_requested: bool = False

    def wire(self) -> TaskView:
        return {
            "taskId": self.id,
            "title": self.title,
            "description": self.description,
            "status": self.status,
            "conversationId": self.conversation_id,
            "startedBy": self.started_by,
            "progress": self.progress,
            "summary": self.summary,
            "cancelRequested": self.cancel_requested,
        }


class Worklog:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.tasks: dict[str, TrackedTask] = {}
        agent.on("task.assigned")(self._assigned)
        agent.on("task.cancel_requested")(self._cancel_requested)

    def open_tasks(self) -> list[TrackedTask]:
        # "unknown": named by the model but not (yet) confirmed by the hub.
        return [t for t in self.tasks.values() if t.status not in TERMINAL | {"unknown"}]

    async def start(self, title: str, description: str, conversation_id: str | None) -> TrackedTask:
        payload: dict[str, Any] = {"taskId": new_id("task"), "title": title}
        if description:
            payload["description"] = description
        if conversation_id:
            payload["conversationId"] = conversation_id
        await self.agent.send("task.created", payload, conversation_id=conversation_id)
        task_id = str(payload["taskId"])
        task = TrackedTask(task_id, title, description, "queued", conversation_id, "agent")
        self.tasks.setdefault(task_id, task)
        await self.accept(self.tasks[task_id])
        return self.tasks[task_id]

    async def accept(self, task: TrackedTask) -> None:
        if task.status == "queued":
            await self.agent.send("task.accepted", {"taskId": task.id}, task_id=task.id)
            task.status = "running"
        elif task.status == "unknown":
            # Queued or already running, we cannot tell; "running" is right for both (and
            # the hub refuses it for a task that is not this agent's or has ended).
            await self.report(task, "running")

    async def report(
        self,
        task: TrackedTask,
        status: str,
        *,
        progress: int | None = None,
        summary: str | None = None,
        error: str | None = None,
    ) -> None:
        if task.status == "queued":
            await self.accept(task)
        payload: dict[str, Any] = {"taskId": task.id, "status": status}
        for key, value in (("progress", progress), ("summary", summary), ("error", error)):
            if value is not None:
                payload[key] = value
        await self.agent.send(
            "task.status_changed", payload, task_id=task.id, conversation_id=task.conversation_id
        )
        task.status = status
        task.progress = progress if progress is not None else task.progress
        task.summary = summary if summary is not None else task.summary

    async def _assigned(self, downlink: Downlink) -> None:
        data = downlink.payload.get("task")
        if not isinstance(data, dict) or not data.get("id"):
            return
        task_id = str(data["id"])
        known = self.tasks.get(task_id)
        if known is not None:
            return  # the echo of a task this agent started itself
        self.tasks[task_id] = TrackedTask(
            task_id,
            str(data.get("title") or ""),
            str(data.get("description") or ""),
            str(data.get("status") or "queued"),
            data.get("conversationId") or None,
            "person",
        )

    async def _cancel_requested(self, downlink: Downlink) -> None:
        task = self.tasks.get(str(downlink.payload.get("taskId") or ""))
        if task is not None:
            # With no task handler running, the SDK has already confirmed the cancellation.
            task.cancel_requested = True
            task.status = "cancelled"
