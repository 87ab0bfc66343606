"""What a remote agent reports, turned into the hub's events for one task.

Each remote fact (a status, an artifact, a message) becomes at most one hub event whose
envelope id is derived from the fact itself, so reading the same fact twice (a resumed
stream's first event is the whole task again; a poll sees the same status) changes nothing.
All remote content goes through ``untrusted`` first. Moves follow the hub's state machine
(``hub.core.task_states``): when the remote jumps (say from ``input-required`` straight to
``completed``), the steps the machine requires are logged in between, never skipped.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from dataclasses import dataclass
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message as ProtoMessage

from hub.core.errors import HubError
from hub.core.log.events import append_event
from hub.core.store.models import Task
from hub.core.store.remote_models import RemoteCall
from hub.core.task_states import TERMINAL_STATUSES, TaskStatus, is_allowed, parse_status
from hub.protocol.clock import utcnow
from plugins.a2a_connector import untrusted
from plugins.a2a_connector.chunks import ChunkedArtifacts
from plugins.a2a_connector.states import UNKNOWN, hub_status, state_name

SUMMARY_LIMIT = 2000
MAX_OPTIONS = 5
# States in which a remote may still add to its artifacts.
STILL_WORKING = frozenset({"submitted", "working", UNKNOWN})


def as_dict(value: ProtoMessage | dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    return MessageToDict(value)


def parts_text(parts: Any, limit: int = untrusted.TEXT_LIMIT, *, joiner: str = "\n") -> str:
    if not isinstance(parts, list):
        return ""
    texts = [p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return untrusted.text(joiner.join(texts), limit)


def offered_options(parts: Any) -> list[str]:
    """Options a remote offers with ``input-required``: a data part ``{"options": [...]}``."""
    if not isinstance(parts, list):
        return []
    for part in parts:
        data = part.get("data") if isinstance(part, dict) else None
        if isinstance(data, dict) and isinstance(data.get("options"), list):
            options = untrusted.strings(data["options"], limit=MAX_OPTIONS + 1, each=100)
            options = list(dict.fromkeys(options))
            if 2 <= len(options) <= MAX_OPTIONS:
                return options
    return []


def _key(*parts: Any) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:20]


@dataclass
class TaskReporter:
    """Logs one hub task's events on behalf of its remote agent."""

    workspace_id: str
    task_id: str
    agent_id: str
    acting_as: str | None = None  # "system" when the hub itself ends the task

    @property
    def actor(self) -> str:
        return self.acting_as or f"agent:{self.agent_id}"

    async def task(self) -> Task:
        return await Task.get(id=self.task_id)

    async def _append(self, type: str, payload: dict[str, Any], key: str, **extra: Any) -> None:
        task = await self.task()
        await append_event(
            self.workspace_id,
            type,
            {"taskId": self.task_id, **payload},
            actor=self.actor,
            task_id=self.task_id,
            conversation_id=task.conversation_id,
            envelope_id=f"a2a-{self.task_id}-{key}",
            **extra,
        )

    async def move(self, target: TaskStatus, key: str, **fields: Any) -> None:
        """Bring the task to ``target`` through the moves the state machine allows."""
        task = await self.task()
        current = parse_status(task.status)
        if current in TERMINAL_STATUSES:
            return
        if current == TaskStatus.QUEUED and target != TaskStatus.CANCELLED:
            await self._append("task.accepted", {}, "accepted")
            current = TaskStatus.RUNNING
        if current == TaskStatus.WAITING_FOR_HUMAN and not is_allowed(current, target):
            await self._append("task.status_changed", {"status": "running"}, f"resume-{key}")
            current = TaskStatus.RUNNING
        if target == current == TaskStatus.RUNNING and not fields:
            return
        if is_allowed(current, target) or target == current:
            await self._append("task.status_changed", {"status": target.value, **fields}, key)

    async def apply_task(
        self, call: RemoteCall, task: dict[str, Any], *, chunks: ChunkedArtifacts | None = None
    ) -> None:
        """Apply a whole task as the remote has it (``GetTask``, a stream's first event).

        Its artifacts are kept only once the remote stopped working (ended, or waits for a
        person): before that one may still be growing chunk by chunk, and the hub keeps an
        artifact once. A stream's ``chunks`` hold them meanwhile for the pieces to come.
        """
        status: dict[str, Any] = task["status"] if isinstance(task.get("status"), dict) else {}
        artifacts: list[Any] = task["artifacts"] if isinstance(task.get("artifacts"), list) else []
        if state_name(status.get("state")) in STILL_WORKING:
            if chunks is not None:
                for artifact in artifacts:
                    await self.apply_artifact(chunks.hold(artifact))
        else:
            for artifact in artifacts:
                await self.apply_artifact(artifact)
        if status:
            await self.apply_status(call, status)

    async def apply_status(self, call: RemoteCall, status: dict[str, Any]) -> None:
        state = state_name(status.get("state"))
        message = status.get("message") if isinstance(status.get("message"), dict) else {}
        parts = message.get("parts")
        said = parts_text(parts)
        key = _key(state, message.get("messageId"), status.get("timestamp"), said[:200])
        call.last_state = state
        call.last_contact_at = call.updated_at = utcnow()
        await call.save(update_fields=["last_state", "last_contact_at", "updated_at"])
        if said:
            await self.post_message(said, key)
        target = hub_status(state)
        summary = said[:SUMMARY_LIMIT]
        if target is None:
            current = parse_status((await self.task()).status)
            if current not in TERMINAL_STATUSES:
                await self._append(
                    "task.status_changed",
                    {
                        "status": current.value,
                        "summary": "Remote state: unknown",
                        "remoteState": UNKNOWN,
                    },
                    f"st-{key}",
                )
        elif target == TaskStatus.WAITING_FOR_HUMAN:
            await self.move(TaskStatus.RUNNING, f"st-{key}")
            await self.ask_person(call, state, said, offered_options(parts), key)
        elif target == TaskStatus.FAILED:
            error = f"Remote {state}" + (f": {summary}" if summary else "")
            await self.move(target, f"st-{key}", error=error, remoteState=state)
        else:
            fields: dict[str, Any] = {"remoteState": state}
            if summary:
                fields["summary"] = summary
            await self.move(target, f"st-{key}", **fields)

    async def ask_person(
        self, call: RemoteCall, state: str, said: str, options: list[str], key: str
    ) -> None:
        interaction_id = f"ia2a{_key(self.task_id, key)}"
        if call.interaction_id == interaction_id:
            return
        if state == "auth-required":
            card: dict[str, Any] = {
                "type": "choice",
                "title": "The remote agent needs you to sign in",
                "description": "It asks to be authorised before it goes on. Do that with the "
                "remote service itself — never paste a password or key here — then tell the "
                "hub to go on.",
                "options": [
                    {"id": "continue", "label": "I have authorised it, go on", "style": "primary"},
                    {"id": "cancel", "label": "Cancel the task", "style": "danger"},
                ],
            }
        elif options:
            card = {
                "type": "choice",
                "title": "The remote agent asks you to choose",
                "options": [{"id": f"o{i}", "label": o} for i, o in enumerate(options)],
            }
        else:
            card = {
                "type": "input",
                "title": "The remote agent needs your answer",
                "input": {"format": "text", "multiline": True},
            }
        card["id"] = interaction_id
        card["risk"] = "medium"
        card["details"] = {"remoteState": state, "remoteMessage": said}
        if said:
            card["description"] = (card.get("description", "") + "\n\nThe agent wrote:\n" + said)[
                :10_000
            ].strip()
        await self._append("interaction.requested", {"interaction": card}, f"ask-{key}")
        call.interaction_id = interaction_id
        await call.save(update_fields=["interaction_id"])

    async def apply_artifact(self, artifact: Any) -> None:
        """Keep a whole artifact. Its text parts are pieces of one document (a streamed
        artifact's chunks add parts), so they are joined as they are, without separator."""
        if not isinstance(artifact, dict):
            return
        remote_id = untrusted.identifier(artifact.get("artifactId")) or _key(artifact.get("name"))
        parts = artifact.get("parts") if isinstance(artifact.get("parts"), list) else []
        content = parts_text(parts, untrusted.ARTIFACT_TEXT_LIMIT, joiner="")
        link = next(
            (
                untrusted.web_url(p.get("url"))
                for p in parts
                if isinstance(p, dict) and p.get("url")
            ),
            None,
        )
        url = (
            link
            or "data:text/plain;charset=utf-8;base64," + base64.b64encode(content.encode()).decode()
        )
        await self._append(
            "artifact.created",
            {
                "artifactId": f"aa2a{_key(self.task_id, remote_id)}",
                "name": untrusted.label(artifact.get("name"), untrusted.NAME_LIMIT) or "artifact",
                "url": url,
                "mimeType": "text/plain" if not link else None,
                "summary": content[:SUMMARY_LIMIT],
            },
            f"art-{_key(remote_id)}",
        )

    async def post_message(self, content: str, key: str) -> None:
        """A remote agent's words become a message when the task belongs to a conversation."""
        task = await self.task()
        if task.conversation_id is None:
            return  # the status summary carries them
        # A message is a courtesy; the status carries the words too.
        with contextlib.suppress(HubError):
            await self._append(
                "message.created",
                {
                    "messageId": f"ma2a{_key(self.task_id, key)}",
                    "content": content,
                    "conversationId": task.conversation_id,
                },
                f"msg-{key}",
            )


__all__ = ["TaskReporter", "as_dict", "offered_options", "parts_text"]
