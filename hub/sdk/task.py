"""One task assigned to the agent, and the helpers that report on it.

A handler registered with ``Agent.on_task`` gets a ``Task`` and works through it: accept,
report progress, create child tasks, ask a person, stream messages, add artifacts, finish.
Each helper waits for the hub's ``ack`` (through disconnects: the uplink is resent with its
original id) and raises ``HubRefused`` if the hub refused it.

Every uplink a task sends gets an id derived from the task and the step's position in the
handler (the n-th call). A handler that runs again after the adapter crashed makes the same
calls in the same order, so it re-sends the same ids and the hub, which stores an id once,
records nothing twice: the work resumes where it stopped instead of repeating steps.

Cancellation is cooperative: when a person asks to stop, the next helper that waits for a
person, ``checkpoint`` or ``sleep`` raises ``TaskCancelled``; if it escapes the handler the
SDK confirms ``cancelled`` to the hub.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, Callable, Mapping
from types import TracebackType
from typing import Any, Unpack

from hub.protocol.interactions import ApprovalFields, InteractionCard, approval_card
from hub.protocol.lap import Ack, InteractionWithdrawn, WithdrawalReason
from hub.sdk.display import interaction_html, interaction_text, task_html, task_text
from hub.sdk.errors import TaskCancelled
from hub.sdk.ids import derived_id
from hub.sdk.resolution import Resolution
from hub.sdk.uplink import Uplink

TERMINAL = frozenset({"succeeded", "failed", "cancelled"})
logger = logging.getLogger(__name__)

Watcher = Callable[["Task"], None]


class Task:
    def __init__(self, uplink: Uplink, data: Mapping[str, Any]) -> None:
        self.uplink = uplink  # the agent's: every helper sends through it
        self.data = dict(data)
        self.id: str = str(data["id"])
        self.title: str = str(data.get("title") or "")
        self.description: str = str(data.get("description") or "")
        self.conversation_id: str | None = data.get("conversationId") or None
        self.parent_id: str | None = data.get("parentTaskId") or data.get("parentId") or None
        self.status: str = str(data.get("status") or "queued")
        self.percent: int | None = data.get("progress")  # the last progress reported
        self.summary: str = str(data.get("summary") or "")
        self.error: str = str(data.get("error") or "")
        # The card a person is being asked right now, and the answers given so far: what a
        # live view (a notebook widget) shows while the task waits.
        self.pending: InteractionCard | None = None
        self.answers: list[tuple[InteractionCard, Resolution]] = []
        self.ended = False
        self._watchers: list[Watcher] = []
        self.cancellation = asyncio.Event()
        self.cancel_reason = ""
        self._steps = 0

    def __repr__(self) -> str:
        return f"Task({self.id!r}, {self.title!r}, status={self.status!r})"

    # --- watching and showing it ---------------------------------------------------------

    def watch(self, watcher: Watcher) -> Watcher:
        """Call ``watcher(task)`` after each change this adapter makes or learns of (status,
        progress, a card asked or answered). Called on the event loop; must not block."""
        self._watchers.append(watcher)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self._watchers:
            self._watchers.remove(watcher)

    def _changed(self) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(self)
            except Exception:  # a broken view must not break the task
                logger.exception("a watcher of task %s failed", self.id)

    def view(self) -> dict[str, Any]:
        """The task as the hub's JSON shows it, from what this adapter knows."""
        asked = [
            {
                "card": card.wire(),
                "status": "resolved",
                "response": answer.response,
                "respondedBy": answer.responded_by,
                "via": answer.via,
                "respondedAt": answer.responded_at.isoformat().replace("+00:00", "Z"),
            }
            for card, answer in self.answers
        ]
        if self.pending is not None:
            asked.append({"card": self.pending.wire(), "status": "pending"})
        return {
            **self.data,
            "status": self.status,
            "progress": self.percent,
            "summary": self.summary,
            "error": self.error,
            "cancelRequested": self.cancel_requested,
            "interactions": asked,
        }

    def __str__(self) -> str:
        return task_text(self.view())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": task_html(self.view())}

    def pending_text(self) -> str | None:
        if self.pending is None:
            return None
        return interaction_text({"card": self.pending.wire(), "status": "pending"})

    def pending_html(self) -> str | None:
        if self.pending is None:
            return None
        return interaction_html({"card": self.pending.wire(), "status": "pending"})

    # --- the hub's view of the task ---------------------------------------------------

    async def accept(self) -> Ack:
        ack = await self._send("task.accepted", {"taskId": self.id})
        self.status = "running"
        self._changed()
        return ack

    async def progress(self, percent: int, summary: str | None = None) -> Ack:
        """Report 0–100 % done and a one-line summary; the task stays ``running``."""
        return await self.report("running", progress=percent, summary=summary)

    async def report(
        self,
        status: str,
        *,
        progress: int | None = None,
        summary: str | None = None,
        error: str | None = None,
    ) -> Ack:
        payload: dict[str, Any] = {"taskId": self.id, "status": status}
        for key, value in (("progress", progress), ("summary", summary), ("error", error)):
            if value is not None:
                payload[key] = value
        ack = await self._send("task.status_changed", payload)
        self.status = status
        self.ended = status in TERMINAL
        if progress is not None:
            self.percent = progress
        if summary is not None:
            self.summary = summary
        if error is not None:
            self.error = error
        self._changed()
        return ack

    async def succeed(self, summary: str | None = None) -> Ack:
        return await self.report("succeeded", progress=100, summary=summary)

    async def fail(self, error: str, summary: str | None = None) -> Ack:
        return await self.report("failed", error=error, summary=summary)

    async def confirm_cancelled(self, summary: str | None = None) -> Ack:
        return await self.report("cancelled", summary=summary or self.cancel_reason or None)

    async def create_child(
        self, title: str, *, description: str = "", status: str = "queued"
    ) -> Task:
        """A sub-task shown under this one; report on it through the returned ``Task``."""
        key = self._next_step()
        child_id = derived_id("task", key)
        await self._send(
            "task.child_created",
            {
                "taskId": child_id,
                "parentTaskId": self.id,
                "title": title,
                "description": description,
                "status": status,
            },
            key=key,
        )
        return Task(
            self.uplink,
            {
                "id": child_id,
                "title": title,
                "description": description,
                "status": status,
                "conversationId": self.conversation_id,
                "parentTaskId": self.id,
            },
        )

    # --- asking a person ---------------------------------------------------------------

    async def request_interaction(self, card: InteractionCard) -> Resolution:
        """Ask a person and wait for the answer, however long it takes and through
        disconnects and restarts; raises ``TaskCancelled`` if the task is cancelled first."""
        key = self._next_step()
        if card.id is None:
            card = card.model_copy(update={"id": derived_id("int", key)})
        self.pending, status_before = card, self.status
        self.status = "waiting_for_human"  # as the hub moves it on the request
        self._changed()
        try:
            answer = await self.uplink.ask(
                card,
                envelope_id=key,
                task_id=self.id,
                conversation_id=self.conversation_id,
                cancellation=self,
            )
        except BaseException:
            self.pending, self.status = None, status_before
            self._changed()
            raise
        self.pending, self.status = None, "running"
        self.answers.append((card, answer))
        self._changed()
        return answer

    async def request_approval(self, title: str, **fields: Unpack[ApprovalFields]) -> Resolution:
        """An approval card (why → impact → options → details); ``.approved`` on the answer.

        Takes ``approval_card``'s keywords. ``policy``: who must approve (a quorum, named
        approvers) and what happens while nobody does; the answer arrives once, when the
        policy has decided."""
        return await self.request_interaction(approval_card(title, **fields))

    async def withdraw_interaction(
        self,
        interaction_id: str,
        *,
        reason: WithdrawalReason = "no_longer_needed",
        note: str = "",
    ) -> Ack:
        """Take back a card of this task that nobody answered yet: the question was
        answered elsewhere (``reason="answered_in_terminal"``: the person answered the
        agent's own dialog first) or is no longer needed. Every surface then shows the card
        closed, saying why, with ``note`` (≤ 500 characters, plain text) beside it.

        A ``request_interaction`` still waiting for that card returns a ``Resolution``
        marked ``withdrawn`` (nothing approved). Raises ``HubRefused``: ``already_decided``
        when a person answered first — that answer is what ``request_interaction`` gets —
        ``interaction_expired`` or ``interaction_cancelled`` when the card had closed
        already, ``interaction_not_yours`` for a card another agent asked. The card's id is
        the one the card was asked with (``task.pending.id`` while it waits).
        """
        withdrawal = InteractionWithdrawn(interaction_id=interaction_id, reason=reason, note=note)
        return await self.uplink.withdraw(withdrawal, task_id=self.id)

    # --- messages and artifacts --------------------------------------------------------

    async def post_message(
        self, content: str, *, attachments: list[dict[str, Any]] | None = None
    ) -> str:
        """A message in the task's conversation (the hub opens one for a task that has
        none, so the task's result has a place on its page); returns its id."""
        key = self._next_step()
        message_id = derived_id("msg", key)
        payload: dict[str, Any] = {"messageId": message_id, "content": content}
        if self.conversation_id:
            payload["conversationId"] = self.conversation_id
        if attachments:
            payload["attachments"] = attachments
        await self._send("message.create", payload, key=key)
        return message_id

    def stream_message(self) -> MessageStream:
        """``async with task.stream_message() as stream: await stream.write(...)``."""
        key = self._next_step()
        return MessageStream(self, derived_id("msg", key), key)

    async def stream_message_from(self, chunks: AsyncIterable[str]) -> str:
        """Stream every chunk of ``chunks`` as it comes, then store the whole text."""
        async with self.stream_message() as stream:
            async for chunk in chunks:
                await stream.write(chunk)
        return stream.message_id

    async def add_artifact(
        self,
        name: str,
        url: str,
        *,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        key = self._next_step()
        artifact_id = derived_id("art", key)
        payload: dict[str, Any] = {
            "artifactId": artifact_id,
            "taskId": self.id,
            "name": name,
            "url": url,
        }
        if mime_type:
            payload["mimeType"] = mime_type
        if summary:
            payload["summary"] = summary
        await self._send("artifact.created", payload, key=key)
        return artifact_id

    # --- cancellation --------------------------------------------------------------------

    @property
    def cancel_requested(self) -> bool:
        return self.cancellation.is_set()

    def checkpoint(self) -> None:
        """Raise ``TaskCancelled`` if a person asked to stop this task."""
        if self.cancellation.is_set():
            raise TaskCancelled(self.id, self.cancel_reason)

    async def sleep(self, seconds: float) -> None:
        """Wait, but stop at once (``TaskCancelled``) if the task is cancelled meanwhile."""
        self.checkpoint()
        try:
            await asyncio.wait_for(self.cancellation.wait(), seconds)
        except TimeoutError:
            return
        self.checkpoint()

    def _cancel(self, reason: str) -> None:
        self.cancel_reason = reason
        self.cancellation.set()
        self._changed()

    # --- plumbing ------------------------------------------------------------------------

    def _next_step(self) -> str:
        self._steps += 1
        return f"{self.id}.{self._steps}"

    async def _send(self, kind: str, payload: dict[str, Any], *, key: str | None = None) -> Ack:
        return await self.uplink.send(
            kind,
            payload,
            envelope_id=key or self._next_step(),
            task_id=self.id,
            conversation_id=self.conversation_id,
        )


class MessageStream:
    """A message written piece by piece: each ``write`` is shown live (``message.delta``),
    the whole text is stored once on leaving the block (``message.create``).

    Deltas are not stored and not resent after a disconnect; the final message is.
    """

    def __init__(self, task: Task, message_id: str, key: str) -> None:
        self.task = task
        self.message_id = message_id
        self._key = key
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._parts)

    async def write(self, chunk: str) -> None:
        if not chunk:
            return
        self._parts.append(chunk)
        payload: dict[str, Any] = {"messageId": self.message_id, "delta": chunk}
        if self.task.conversation_id:
            payload["conversationId"] = self.task.conversation_id
        await self.task.uplink.send_unacknowledged(
            "message.delta",
            payload,
            task_id=self.task.id,
            conversation_id=self.task.conversation_id,
        )

    async def __aenter__(self) -> MessageStream:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is not None:
            return  # the writer failed: store nothing rather than half a thought
        payload: dict[str, Any] = {"messageId": self.message_id, "content": self.text}
        if self.task.conversation_id:
            payload["conversationId"] = self.task.conversation_id
        await self.task.uplink.send(
            "message.create",
            payload,
            envelope_id=self._key,
            task_id=self.task.id,
            conversation_id=self.task.conversation_id,
        )
