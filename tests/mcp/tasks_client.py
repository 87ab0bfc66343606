"""The requester side of the MCP tasks extension, on the official client, for tests.

The ``mcp`` package (2.x) leaves tasks to extensions: ``ClientExtension`` advertises one
and claims the ``resultType: "task"`` a server may answer a tool call with. ``TasksClient``
does that. Passed to ``mcp.Client(extensions=[...])`` it makes ``call_tool`` poll a task
to its end and return the tool's result (what a client that only wants the answer does);
``start`` instead returns the task's handle for a test to poll (``get``), answer
(``update``), cancel (``cancel``) or follow (``listen``) itself.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.session import ClientSession
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict, Field, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


class TaskHandle(Result):
    """A ``CreateTaskResult``: the task the server made instead of answering at once."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field("task", alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(None, alias="pollIntervalMs")


class _TaskParams(RequestParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str = Field(alias="taskId")


class _Any(RequestParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class _Listen(Request[_Any, str]):
    pass


class _TaskRequest(Request[_TaskParams, str]):
    name_param = "taskId"  # tasks/* carry the task id in the Mcp-Name header


class TasksClient(ClientExtension):
    identifier = TASKS

    def __init__(self, poll_s: float = 0.2, within_s: float = 60.0) -> None:
        self.poll_s = poll_s
        self.within_s = within_s
        self.heard: list[dict[str, Any]] = []  # every notifications/tasks, in order

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve)]

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(method="notifications/tasks", params_type=_Any, handler=self._heard)
        ]

    async def _heard(self, params: _Any) -> None:
        self.heard.append(params.model_dump(by_alias=True))

    async def listen(self, session: ClientSession, task_ids: list[str]) -> dict[str, Any]:
        """``subscriptions/listen`` for ``task_ids``: returns once the server ends the stream
        (when every task has ended); what it streamed is in ``heard``."""
        params = {"notifications": {"taskIds": task_ids}}
        request = _Listen(method="subscriptions/listen", params=_Any.model_validate(params))
        return await session.send_request(request, TypeAdapter(dict[str, Any]))

    async def _resolve(self, handle: TaskHandle, context: ClaimContext) -> CallToolResult:
        task = await self.until_done(context.session, handle.task_id)
        if task["status"] != "completed":
            raise RuntimeError(f"task {handle.task_id} ended {task['status']}: {task}")
        return CallToolResult.model_validate(task["result"])

    async def start(
        self, session: ClientSession, tool: str, arguments: dict[str, Any]
    ) -> TaskHandle:
        handle = await session.call_tool(tool, arguments, allow_claimed=True)
        assert isinstance(handle, TaskHandle), f"no task: {handle}"
        return handle

    async def get(self, session: ClientSession, task_id: str) -> dict[str, Any]:
        return await _send(session, "tasks/get", {"taskId": task_id})

    async def update(
        self, session: ClientSession, task_id: str, responses: dict[str, Any]
    ) -> dict[str, Any]:
        return await _send(
            session, "tasks/update", {"taskId": task_id, "inputResponses": responses}
        )

    async def cancel(self, session: ClientSession, task_id: str) -> dict[str, Any]:
        return await _send(session, "tasks/cancel", {"taskId": task_id})

    async def until(
        self, session: ClientSession, task_id: str, statuses: set[str]
    ) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task's status is one of ``statuses`` (or it ends)."""
        async with asyncio.timeout(self.within_s):
            while True:
                task = await self.get(session, task_id)
                if task["status"] in statuses | TERMINAL:
                    return task
                await asyncio.sleep(self.poll_s)

    async def until_done(self, session: ClientSession, task_id: str) -> dict[str, Any]:
        return await self.until(session, task_id, TERMINAL)


async def _send(session: ClientSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request = _TaskRequest(method=method, params=_TaskParams.model_validate(params))
    result: dict[str, Any] = await session.send_request(request, TypeAdapter(dict[str, Any]))
    return result
