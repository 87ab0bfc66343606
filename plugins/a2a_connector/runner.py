"""One hub task carried out by a remote agent, from first message to a final state.

``CallRunner.run`` loops over the ledger row (``RemoteCall``) until the task ends. Every
step starts from what is stored, so the same loop starts a call, resumes one after a hub
restart, answers a card, or cancels:

* no remote task yet → ``SendMessage`` (``SendStreamingMessage`` when the card streams);
* a card the person answered → the answer goes back as a message in the same task and
  context;
* a cancel request → ``CancelTask``;
* otherwise → follow the task: ``SubscribeToTask`` (whose first event is the whole task)
  when the card streams, else ``GetTask`` when the remote pushes a change to the hub's
  webhook, or polling with backoff (``plugins.a2a_connector.updates``).

Network failures mark the remote unreachable, wait as the circuit breaker says, and retry;
once the grace period passes without contact the task fails with ``remote_unreachable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, Protocol

import httpx
from a2a.client import A2AClientError
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import A2AError, TaskNotCancelableError, TaskNotFoundError
from google.protobuf.json_format import ParseError

from hub.config import Settings
from hub.core.agents.remote import UNREACHABLE, note_contact, remote_secret
from hub.core.store.models import Interaction, InteractionStatus, Task
from hub.core.store.remote_models import RemoteAgent, RemoteCall
from hub.core.task_states import TERMINAL_STATUSES, TaskStatus
from hub.protocol.clock import utcnow
from plugins.a2a_connector.breaker import Breaker
from plugins.a2a_connector.chunks import ChunkedArtifacts
from plugins.a2a_connector.client import remote_client
from plugins.a2a_connector.errors import RemoteUnreachable
from plugins.a2a_connector.states import FINAL_STATES, state_name
from plugins.a2a_connector.translate import STILL_WORKING, TaskReporter, as_dict
from plugins.a2a_connector.untrusted import identifier
from plugins.a2a_connector.updates import (
    POLL,
    POLL_PUSH_REFUSED,
    PUSH,
    REFUSALS,
    STREAM,
    Updates,
    webhook,
)
from plugins.a2a_connector.webhook import push_token, push_url

logger = logging.getLogger(__name__)

# Anything else the remote answers with (internal errors, answers of the wrong shape that
# the SDK cannot parse) is retried like an outage: the grace period bounds how long.
NETWORK_ERRORS = (
    httpx.HTTPError,
    A2AClientError,
    A2AError,
    RemoteUnreachable,
    OSError,
    ParseError,
    ValueError,
    TypeError,
    KeyError,
)
TASK_LOST = "remote_task_lost"
SIGNED_IN = "The person has completed the authorisation you asked for; please go on."


class RunnerHost(Protocol):
    """What a call's runner needs of the connector that starts it
    (``plugins.a2a_connector.connector``): its settings and timings, this process's owner
    name, the breaker shared by the calls to one remote, and whether it is stopping."""

    settings: Settings
    poll_interval_s: float
    grace_period_s: float
    owner: str
    breaker: Breaker
    stopping: bool


class CallRunner:
    def __init__(self, connector: RunnerHost, call_id: str) -> None:
        self.connector = connector
        self.call_id = call_id
        self.wake = asyncio.Event()
        self.updates = Updates(connector.poll_interval_s)

    def pushed(self) -> None:
        """The remote posted a change to the webhook: read the task now."""
        self.updates.pushed()
        self.wake.set()

    async def run(self) -> None:
        while not self.connector.stopping:
            # Cleared before the state is read: a wake after this point is never lost.
            self.wake.clear()
            call = await RemoteCall.get(id=self.call_id)
            if call.owner != self.connector.owner:
                return  # another hub process took the call over (this one stalled)
            task = await Task.get(id=call.id)
            if call.finished or task.status in TERMINAL_STATUSES:
                await RemoteCall.filter(id=call.id).update(finished=True, updated_at=utcnow())
                return
            remote = await RemoteAgent.get(id=call.agent_id)
            reporter = TaskReporter(call.workspace_id, call.id, call.agent_id)
            try:
                idle = await self.step(call, task, remote, reporter)
            except TaskNotFoundError:
                # The remote forgot the task (say it restarted without storage): it will
                # never report again, so the hub task ends here rather than wait forever.
                await self._answered(remote.id)
                reporter.acting_as = "system"
                await reporter.move(TaskStatus.FAILED, "lost", error=TASK_LOST, reason=TASK_LOST)
                await RemoteCall.filter(id=call.id).update(finished=True, updated_at=utcnow())
                return
            except TaskNotCancelableError:
                # It ended before the cancel arrived; the next read shows how it ended.
                await self._answered(remote.id)
                await RemoteCall.filter(id=call.id).update(cancel_sent_at=utcnow())
                continue
            except NETWORK_ERRORS as error:
                logger.info("remote agent %s unreachable: %s", remote.id, error)
                await note_contact(remote.id, reachable=False)
                if await self._past_grace(remote.id, reporter):
                    return
                await self.sleep(self.connector.breaker.failed(remote.id))
                continue
            await self._answered(remote.id)
            if idle:
                await self.sleep(idle)

    async def _answered(self, remote_id: str) -> None:
        """The remote answered (whatever it said): it is reachable."""
        self.connector.breaker.succeeded(remote_id)
        await note_contact(remote_id, reachable=True)

    async def step(
        self, call: RemoteCall, task: Task, remote: RemoteAgent, reporter: TaskReporter
    ) -> float:
        """Do the next thing the ledger calls for; returns how long to wait after it."""
        async with self._client(remote) as client:
            if task.cancel_requested_at is not None and call.cancel_sent_at is None:
                if call.remote_task_id is None:  # never reached the remote: nothing to stop
                    await reporter.move(TaskStatus.CANCELLED, "cancelled-before-start")
                else:
                    answer = await client.cancel_task(CancelTaskRequest(id=call.remote_task_id))
                    await reporter.apply_task(call, as_dict(answer))
                call.cancel_sent_at = utcnow()
                await call.save(update_fields=["cancel_sent_at"])
                return 0.0
            if call.remote_task_id is None:
                if remote.streaming:  # the send itself streams the task's changes
                    await self._choose_updates(call, remote, client)
                text = task.title + (f"\n\n{task.description}" if task.description else "")
                await self.consume(
                    call, reporter, client.send_message(self._request(task.id, text))
                )
                return 0.0
            if call.interaction_id and call.interaction_id != call.answered_interaction_id:
                if self.updates.take_pushes() and await self._ended_meanwhile(
                    call, reporter, client
                ):
                    return 0.0
                return await self._answer(call, reporter, client)
            if call.last_state in FINAL_STATES:
                return 0.0
            before = call.last_state
            pushed = self.updates.take_pushes()
            if not self.updates.registered:
                await self._choose_updates(call, remote, client)
            # GetTask first, even when streaming: a remote refuses SubscribeToTask for a task
            # that ended while the hub was away, and this read carries that ending.
            current = await client.get_task(GetTaskRequest(id=call.remote_task_id))
            await reporter.apply_task(call, as_dict(current))
            if remote.streaming and call.last_state not in FINAL_STATES and not call.interaction_id:
                request = SubscribeToTaskRequest(id=call.remote_task_id)
                await self.consume(call, reporter, client.subscribe(request))
                return 0.0 if call.last_state in FINAL_STATES else self.connector.poll_interval_s
            wait = self.updates.after_read(changed=call.last_state != before, pushed=pushed)
            await self._show_updates(call)
            return wait

    async def _ended_meanwhile(self, call: RemoteCall, reporter: TaskReporter, client: Any) -> bool:
        """A push while the person's card waits: the remote may have ended the task on its
        side (cancelled there, given up waiting). Only an ending is taken from this read; the
        hub task then ends and its card closes. Anything else waits for the person's answer,
        as the card asks."""
        assert call.remote_task_id is not None
        current = as_dict(await client.get_task(GetTaskRequest(id=call.remote_task_id)))
        status = current.get("status") if isinstance(current.get("status"), dict) else {}
        if state_name(status.get("state")) not in FINAL_STATES:
            return False
        await reporter.apply_task(call, current)
        return True

    async def _choose_updates(self, call: RemoteCall, remote: RemoteAgent, client: Any) -> None:
        """Stream, push or poll; for push, (re-)register the webhook, which a restarted hub
        must do too: the remote may have lost it, or the hub's address changed."""
        settings = self.connector.settings
        if remote.streaming:
            self.updates.registered_as(STREAM)
        elif not (settings.a2a_push and remote.card.get("pushNotifications") is True):
            self.updates.registered_as(POLL)
        else:
            assert call.remote_task_id is not None
            config = webhook(
                call.remote_task_id,
                push_url(settings.resolved_public_url, call.id),
                push_token(settings.secret_key, call.id),
            )
            try:
                await client.create_task_push_notification_config(config)
            except REFUSALS as error:
                logger.info("remote agent %s refused the webhook: %s", remote.id, error)
                self.updates.registered_as(POLL_PUSH_REFUSED)
            else:
                self.updates.registered_as(PUSH)
        await self._show_updates(call)

    async def _show_updates(self, call: RemoteCall) -> None:
        """Keep the way the task is followed on the ledger, where the task's page reads it."""
        if call.updates != self.updates.mode:
            logger.info("remote call %s is followed by %s now", call.id, self.updates.mode)
            call.updates = self.updates.mode
            await call.save(update_fields=["updates"])

    async def _answer(self, call: RemoteCall, reporter: TaskReporter, client: Any) -> float:
        interaction = await Interaction.get(id=call.interaction_id)
        if interaction.status == InteractionStatus.PENDING:
            return self.connector.poll_interval_s * 10  # woken at once by the answer
        response = interaction.response or {}
        call.answered_interaction_id = interaction.id
        if interaction.status != InteractionStatus.RESOLVED:
            await call.save(update_fields=["answered_interaction_id"])
            return 0.0
        options = {o.get("id"): o.get("label") for o in interaction.payload.get("options", [])}
        if call.last_state == "auth-required":
            if response.get("optionId") == "cancel":
                await RemoteCall.filter(id=call.id).update(answered_interaction_id=interaction.id)
                answer = await client.cancel_task(CancelTaskRequest(id=call.remote_task_id))
                await reporter.apply_task(call, as_dict(answer))
                call.cancel_sent_at = utcnow()
                await call.save(update_fields=["answered_interaction_id", "cancel_sent_at"])
                return 0.0
            # Only the fact that the person signed in goes back, never a credential.
            response = {"text": SIGNED_IN}
        text = response.get("text") or options.get(response.get("optionId")) or ""
        # Saved once the remote took it: a failed send is retried rather than lost. The
        # message id is the card's, so a remote can tell a repeat after a crash.
        request = self._request(interaction.id, str(text), call=call)
        await self.consume(call, reporter, client.send_message(request))
        await call.save(update_fields=["answered_interaction_id"])
        return 0.0

    def _request(
        self, message_id: str, text: str, *, call: RemoteCall | None = None
    ) -> SendMessageRequest:
        message = Message(role=Role.ROLE_USER, message_id=message_id, parts=[Part(text=text)])
        if call is not None and call.remote_task_id:
            message.task_id = call.remote_task_id
            if call.context_id:
                message.context_id = call.context_id
        return SendMessageRequest(message=message)

    async def consume(
        self, call: RemoteCall, reporter: TaskReporter, stream: AsyncIterator[StreamResponse]
    ) -> None:
        """Apply the stream's events until it ends or the runner is woken (a cancel request,
        an answer): an open stream must not keep the person's request waiting."""
        reading = asyncio.ensure_future(self._read(call, reporter, stream))
        try:
            while not reading.done():
                woken = asyncio.ensure_future(self.wake.wait())
                try:
                    await asyncio.wait({reading, woken}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    woken.cancel()
                if reading.done():
                    break
                self.wake.clear()
                # Only a cancel request stops the stream; other wakes (the very answer this
                # stream carries, published just after it committed) must not cut it off.
                task = await Task.get(id=call.id)
                if task.cancel_requested_at is not None and call.cancel_sent_at is None:
                    self.wake.set()  # so the next step sees it at once
                    break
        finally:
            if not reading.done():
                reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)
        if not reading.cancelled():
            reading.result()  # a network error ends the step like any other

    async def _read(
        self, call: RemoteCall, reporter: TaskReporter, stream: AsyncIterator[StreamResponse]
    ) -> None:
        chunks = ChunkedArtifacts()
        async for response in stream:
            kind = response.WhichOneof("payload")
            data = as_dict(getattr(response, kind)) if kind else {}
            await self._note_ids(call, data)
            if kind == "task":
                await reporter.apply_task(call, data, chunks=chunks)
            elif kind == "status_update":
                status = data.get("status") or {}
                if state_name(status.get("state")) not in STILL_WORKING:
                    # Ended or waiting for a person: what was sent so far is all there is.
                    await self._keep_artifacts(reporter, chunks)
                await reporter.apply_status(call, status)
            elif kind == "artifact_update":
                await reporter.apply_artifact(chunks.update(data))
            elif kind == "message":  # answered without a task: that answer is the result
                await self._keep_artifacts(reporter, chunks)
                await reporter.apply_status(call, {"state": "completed", "message": data})
            if call.last_state in FINAL_STATES or self.connector.stopping:
                break
        # Only a stream that ended as it should hands over what it held: one cut short (an
        # error, a cancel request, the hub stopping) is read again from GetTask, whose
        # artifacts the remote has put together.
        if not self.connector.stopping:
            await self._keep_artifacts(reporter, chunks)

    async def _keep_artifacts(self, reporter: TaskReporter, chunks: ChunkedArtifacts) -> None:
        for artifact in chunks.remaining():
            await reporter.apply_artifact(artifact)

    async def _note_ids(self, call: RemoteCall, data: dict[str, Any]) -> None:
        remote_task_id = identifier(data.get("id") or data.get("taskId"))
        if call.remote_task_id is None and remote_task_id:
            call.remote_task_id = remote_task_id
            call.context_id = identifier(data.get("contextId"))
            await call.save(update_fields=["remote_task_id", "context_id"])

    @contextlib.asynccontextmanager
    async def _client(self, remote: RemoteAgent) -> AsyncIterator[Any]:
        secret = remote_secret(remote, self.connector.settings.secret_key)
        async with remote_client(
            remote, secret=secret, allow_private=self.connector.settings.outbound_allow_private
        ) as client:
            yield client

    async def _past_grace(self, remote_id: str, reporter: TaskReporter) -> bool:
        remote = await RemoteAgent.get(id=remote_id)
        since = remote.unreachable_since
        if since is None or utcnow() - since < timedelta(seconds=self.connector.grace_period_s):
            return False
        task = await reporter.task()
        if task.status == TaskStatus.WAITING_FOR_HUMAN:
            return False  # the machine has no move to failed from here; the answer waits
        reporter.acting_as = "system"
        await reporter.move(TaskStatus.FAILED, "unreachable", error=UNREACHABLE, reason=UNREACHABLE)
        await RemoteCall.filter(id=self.call_id).update(finished=True, updated_at=utcnow())
        return True

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), seconds)
        self.wake.clear()


__all__ = ["CallRunner"]
