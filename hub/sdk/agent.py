"""The agent: one identity on one hub, its handlers, and the calls an adapter makes.

``Agent`` owns the durable state (``StateStore``), what it sends and the answers it waits
for (``Uplink``), which downlink events were handled (``DeliveryLedger``) and the socket
(``Connection``). It works the same in a script (``asyncio.run(agent.run())``) and in a
notebook, where ``agent = await Agent.connect(...)`` returns once connected and leaves the
connection to a background task of the notebook's own event loop.

Downlink events are taken in sequence order, each once (``DeliveryLedger``). Two kinds are
absorbed as soon as they arrive, so a handler waiting for them is never stuck behind
another: ``interaction.resolved`` and ``interaction.expired`` (the answer, or the card's
expiry with nothing decided, is saved, then given to whoever waits for it) and
``task.cancel_requested`` (the task's handler is told). Then the ``Dispatcher`` hands
every event to the adapter's handlers, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack

from pydantic import ValidationError

from hub.protocol.interactions import ApprovalFields, InteractionCard, approval_card
from hub.protocol.lap import (
    Ack,
    AgentHello,
    AgentPaired,
    AgentWelcome,
    InteractionWithdrawn,
    ResyncRequired,
    WithdrawalReason,
)
from hub.sdk.backoff import Backoff
from hub.sdk.connection import Connection
from hub.sdk.dispatch import Dispatcher, Downlink, F, TaskHandler
from hub.sdk.errors import AgentClosed, AuthenticationFailed, HubRefused, NotPaired
from hub.sdk.ids import new_id
from hub.sdk.ledger import DeliveryLedger
from hub.sdk.resolution import Resolution
from hub.sdk.state import AgentState, StateStore, normalise_hub_url
from hub.sdk.task import Task
from hub.sdk.uplink import Uplink

logger = logging.getLogger(__name__)

SDK_VERSION = "lineup-sdk/0.1"


class Agent:
    def __init__(
        self,
        hub: str,
        *,
        credential: str | None = None,
        pairing_code: str | None = None,
        name: str | None = None,
        profile: str = "default",
        state_dir: str | Path | None = None,
        store: StateStore | None = None,
        agent_version: str = SDK_VERSION,
        runtime: str = f"python{sys.version_info.major}.{sys.version_info.minor}",
        capabilities: list[str] | None = None,
        backoff: Backoff | None = None,
        ping_interval_s: float | None = 20.0,
        ping_timeout_s: float | None = 20.0,
    ) -> None:
        self.hub = normalise_hub_url(hub)
        self.store = store or StateStore.for_hub(
            self.hub, profile, Path(state_dir) if state_dir else None
        )
        self.state: AgentState = self.store.load(self.hub)
        if credential and credential != self.state.credential:
            self.state = AgentState(hub=self.hub, credential=credential)
        self.name = name
        self.agent_version = agent_version
        self.runtime = runtime
        self.capabilities = list(capabilities or [])
        self.heartbeat_interval_s: float | None = None
        self.duplicates_dropped = 0  # downlink repeats skipped (a replay overlapping a live send)
        self._pairing_code = pairing_code
        self._ledger = DeliveryLedger(self.state.last_sequence, self.state.handled)
        self._connection = Connection(
            self.hub,
            self,
            backoff=backoff,
            ping_interval_s=ping_interval_s,
            ping_timeout_s=ping_timeout_s,
        )
        self._uplink = Uplink(
            self._connection,
            stored=self.state.outbox,
            known_answer=self._known_answer,
            persist=self._persist,
            keep_answer=self._keep_answer,
        )
        self._dispatcher = Dispatcher(self._uplink, finished=self._finished)
        self._welcome_epoch: str | None = None
        self._run_task: asyncio.Task[None] | None = None

    # --- identity and status ------------------------------------------------------------

    @property
    def agent_id(self) -> str | None:
        return self.state.agent_id

    @property
    def workspace_id(self) -> str | None:
        return self.state.workspace_id

    @property
    def connected(self) -> bool:
        return self._uplink.live.is_set()

    @property
    def closed(self) -> bool:
        """Closed, or stopped serving (the hub refused its identity)."""
        return self._uplink.closed or (self._run_task is not None and self._run_task.done())

    @property
    def last_sequence(self) -> int:
        return self._ledger.watermark

    @property
    def connects(self) -> int:
        """How many times a socket reached ``agent.welcome`` (1 + reconnects)."""
        return self._connection.connects

    @property
    def pending_uplinks(self) -> int:
        return len(self._uplink.pending)

    async def wait_connected(self) -> None:
        await self._uplink.live.wait()

    # --- handlers -------------------------------------------------------------------------

    def on_task(self, handler: TaskHandler) -> TaskHandler:
        """Decorator: ``handler(task)`` runs for each task assigned to this agent.

        Returning means the task succeeded (unless it already reported an end), raising
        means it failed, ``TaskCancelled`` means it stopped on request.
        """
        self._dispatcher.task_handler = handler
        return handler

    def on(self, kind: str) -> Callable[[F], F]:
        """Decorator: ``handler(downlink)`` for each downlink event of type ``kind``."""

        def register(handler: F) -> F:
            self._dispatcher.handlers[kind].append(handler)
            return handler

        return register

    # --- lifecycle ------------------------------------------------------------------------

    @classmethod
    async def connect(cls, hub: str, **options: Any) -> Agent:
        """Create, connect and return the agent (the connection keeps running in the
        background); the way to use it in a notebook. Bound the wait with
        ``asyncio.timeout(...)`` around it if the hub may be down."""
        return await cls(hub, **options).start()

    async def start(self) -> Agent:
        """Connect in the background; return once the hub has welcomed the agent.

        Raises ``AuthenticationFailed`` if the hub refuses the pairing code or credential,
        ``NotPaired`` if there is neither. Cancelled (e.g. by ``asyncio.timeout``), it
        closes the agent before letting the cancellation through.
        """
        if self._run_task is None:
            if not self.state.credential and not self._pairing_code:
                raise NotPaired(
                    f"No credential for {self.hub} in {self.store.path} and no pairing code: "
                    "create a pairing code in the hub (or `lineup pair`) and pass it."
                )
            self._run_task = asyncio.create_task(self._connection.run(), name="lineup-connection")
            self._dispatcher.start()
        ready: asyncio.Task[Any] = asyncio.create_task(self._uplink.live.wait())
        connection: asyncio.Task[Any] = self._run_task
        try:
            await asyncio.wait({ready, connection}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            ready.cancel()
            await self.close()
            raise
        if ready.done():
            return self
        ready.cancel()
        failure = connection.exception()
        await self.close()
        raise failure or AgentClosed("the connection ended before the hub welcomed the agent")

    async def run(self) -> None:
        """Connect and serve until ``close`` (or a refused identity, which raises)."""
        await self.start()
        assert self._run_task is not None
        try:
            await self._run_task
        finally:
            await self.close()

    async def close(self) -> None:
        """Disconnect. Task handlers still running are stopped without reporting anything:
        their events stay below the saved position, so the next run resumes them."""
        if self._uplink.closed:
            return
        self._uplink.close()
        await self._connection.close()
        await self._dispatcher.stop()
        if self._run_task is not None and not self._run_task.done():
            self._run_task.cancel()
        if self._run_task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._run_task
        self._uplink.abandon_waiters(AgentClosed("the agent was closed"))
        self._persist()

    async def __aenter__(self) -> Agent:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- uplinks --------------------------------------------------------------------------

    async def send(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
        envelope_id: str | None = None,
    ) -> Ack:
        """Any uplink, kept and resent until acknowledged; raises ``HubRefused`` if refused."""
        return await self._uplink.send(
            kind,
            payload,
            envelope_id=envelope_id or new_id("evt"),
            task_id=task_id,
            conversation_id=conversation_id,
        )

    async def post_message(
        self,
        conversation_id: str,
        content: str,
        *,
        task_id: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> str:
        message_id = new_id("msg")
        payload: dict[str, Any] = {
            "messageId": message_id,
            "conversationId": conversation_id,
            "content": content,
        }
        if attachments:
            payload["attachments"] = attachments
        await self.send("message.create", payload, task_id=task_id, conversation_id=conversation_id)
        return message_id

    async def add_artifact(
        self,
        name: str,
        url: str,
        *,
        task_id: str | None = None,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        artifact_id = new_id("art")
        payload: dict[str, Any] = {"artifactId": artifact_id, "name": name, "url": url}
        for key, value in (("taskId", task_id), ("mimeType", mime_type), ("summary", summary)):
            if value:
                payload[key] = value
        await self.send("artifact.created", payload, task_id=task_id)
        return artifact_id

    async def request_interaction(
        self,
        card: InteractionCard,
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
        envelope_id: str | None = None,
    ) -> Resolution:
        """Ask a person and wait for the answer (through disconnects). Inside a task
        handler prefer ``task.request_interaction``, which also survives restarts; a caller
        that keeps its own idempotency keys passes the card's ``id`` and ``envelope_id``, so
        that asking again after a restart waits on the same card."""
        if card.id is None:
            card = card.model_copy(update={"id": new_id("int")})
        return await self._uplink.ask(
            card,
            envelope_id=envelope_id or new_id("evt"),
            task_id=task_id,
            conversation_id=conversation_id,
        )

    async def request_approval(
        self, title: str, *, task_id: str | None = None, **fields: Unpack[ApprovalFields]
    ) -> Resolution:
        """An approval card (``approval_card``'s keywords) asked outside a task handler."""
        return await self.request_interaction(approval_card(title, **fields), task_id=task_id)

    async def withdraw_interaction(
        self,
        interaction_id: str,
        *,
        reason: WithdrawalReason = "no_longer_needed",
        note: str = "",
    ) -> Ack:
        """Take back a card this agent asked that nobody answered yet (see
        ``Task.withdraw_interaction``)."""
        withdrawal = InteractionWithdrawn(interaction_id=interaction_id, reason=reason, note=note)
        return await self._uplink.withdraw(withdrawal)

    def task(self, data: dict[str, Any]) -> Task:
        """A ``Task`` helper for a task this adapter knows of by other means (``{"id": ...}``)."""
        return Task(self._uplink, data)

    async def create_task(
        self, title: str, *, description: str = "", conversation_id: str | None = None
    ) -> Task:
        """Open a task of this agent's own (``queued``; ``accept()`` it to start), for work no
        person assigned, so that its progress, cards and artifacts are tracked like any."""
        data: dict[str, Any] = {"taskId": new_id("task"), "title": title}
        if description:
            data["description"] = description
        if conversation_id:
            data["conversationId"] = conversation_id
        await self.send("task.created", data, conversation_id=conversation_id)
        return Task(self._uplink, {**data, "id": data["taskId"], "status": "queued"})

    # --- the session the connection serves ------------------------------------------------

    def credential(self) -> str | None:
        return self.state.credential

    def credential_refused(self, error: AuthenticationFailed) -> bool:
        if self.state.credential and self._pairing_code:
            logger.warning("stored credential refused (%s); pairing with the code given", error)
            self.state = AgentState(hub=self.hub)
            self._ledger = DeliveryLedger()
            self._uplink.forget()
            self._persist()
            return True
        return False

    def hello_payload(self) -> dict[str, Any]:
        pairing = not self.state.credential
        hello = AgentHello(
            agent_version=self.agent_version,
            runtime=self.runtime,
            capabilities=self.capabilities,
            last_sequence=self._ledger.watermark,
            epoch=self.state.epoch,
            pairing_code=self._pairing_code if pairing else None,
            name=(self.name or "agent") if pairing else self.name,
        )
        return hello.wire()

    async def paired(self, paired: AgentPaired) -> None:
        self.state = AgentState(
            hub=self.hub,
            credential=paired.credential,
            agent_id=paired.agent_id,
            workspace_id=paired.workspace_id,
        )
        self._ledger = DeliveryLedger()
        self._pairing_code = None  # used up: a later refusal must not try it again
        self._persist()
        logger.info("paired as agent %s; credential saved in %s", paired.agent_id, self.store.path)

    async def welcomed(self, welcome: AgentWelcome, connection: Connection) -> None:
        if self.state.agent_id and self.state.agent_id != welcome.agent_id:
            self.state.forget_log_position()
            self._ledger = DeliveryLedger()
            self._uplink.forget()
        self.state.agent_id = welcome.agent_id
        self.state.workspace_id = welcome.workspace_id
        self._welcome_epoch = welcome.epoch
        if self.state.epoch is None:
            self.state.epoch = welcome.epoch
        elif self.state.epoch != welcome.epoch:
            logger.warning(
                "the hub's log is another one (epoch %s, was %s): expecting a resync",
                welcome.epoch,
                self.state.epoch,
            )
        self.heartbeat_interval_s = welcome.heartbeat_interval_s
        self._persist()
        self._uplink.resume()

    def disconnected(self) -> None:
        self._uplink.suspend()

    async def received(self, frame: dict[str, Any]) -> None:
        kind = str(frame.get("type") or "")
        payload = frame.get("payload") if isinstance(frame.get("payload"), dict) else {}
        assert isinstance(payload, dict)
        if kind == "ack":
            try:
                ack = Ack.model_validate(payload)
            except ValidationError:
                logger.warning("ignoring a malformed ack: %.300r", frame)
                return
            self._uplink.acknowledged(ack)
            return
        if kind == "error":
            error = HubRefused.from_frame(payload)
            envelope_id = payload.get("id")
            if not (isinstance(envelope_id, str) and self._uplink.refused(envelope_id, error)):
                logger.warning("the hub reported: %s", error)
            return
        if kind == "warning":
            logger.warning("the hub warns: %s", payload.get("message") or payload)
            return
        if kind == "system.resync_required":
            self._resync(payload)
        sequence = frame.get("sequence")
        if isinstance(sequence, int) and kind != "system.resync_required":
            if not self._ledger.begin(sequence):
                self.duplicates_dropped += 1
                return
            self._absorb(kind, payload)
        else:
            sequence = None
        self._dispatcher.put(Downlink(kind, sequence, payload, frame))

    def _resync(self, payload: dict[str, Any]) -> None:
        try:
            resync = ResyncRequired.model_validate(payload)
        except ValidationError:
            logger.warning("ignoring a malformed resync frame: %.300r", payload)
            return
        logger.warning(
            "the hub cannot replay from %s (%s): continuing from %s",
            self._ledger.watermark,
            resync.reason,
            resync.last_sequence,
        )
        self._ledger.reset(resync.last_sequence)
        self.state.epoch = self._welcome_epoch or self.state.epoch
        self._persist()

    def _absorb(self, kind: str, payload: dict[str, Any]) -> None:
        if kind in ("interaction.resolved", "interaction.expired"):
            try:
                resolution = Resolution.from_payload(payload)
            except ValidationError:
                logger.warning("ignoring a malformed resolution: %.300r", payload)
                return
            self._keep_answer(resolution.interaction_id, payload)
            self._uplink.answered(resolution)
        elif kind == "task.cancel_requested":
            self._dispatcher.cancel_requested(
                str(payload.get("taskId") or ""), str(payload.get("reason") or "")
            )

    def _known_answer(self, interaction_id: str) -> dict[str, Any] | None:
        return self.state.resolutions.get(interaction_id)

    def _keep_answer(self, interaction_id: str, payload: dict[str, Any]) -> None:
        self.state.keep_resolution(interaction_id, payload)
        self._persist()

    def _finished(self, sequence: int) -> None:
        self._ledger.finish(sequence)
        self._persist()

    def _persist(self) -> None:
        self.state.last_sequence = self._ledger.watermark
        self.state.handled = self._ledger.handled
        self.state.outbox = self._uplink.pending.envelopes()
        self.store.save(self.state)
