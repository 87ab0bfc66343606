"""One agent's socket, from ``agent.hello`` to close.

Handshake: the first valid frame must be ``agent.hello``. With a bearer credential (checked
on the upgrade request) the agent is known; without one the hello must carry
``pairingCode`` and ``name``, and the hub answers ``agent.paired`` before going on as that
agent. Then ``agent.welcome``, then ``system.resync_required`` if the agent's position
belongs to another log (another ``epoch``) or lies beyond this one, then the replay of the
agent's downlink events after ``lastSequence`` and live ones (``AgentDownlink``).

After the hello every frame is answered: ``ack`` or ``error`` naming its id, or a
``warning`` for a type this hub does not know. A bad frame never closes the socket; only a
failed identity does (bad pairing code, another workspace in the hello, a revoked
credential), with an ``error`` frame first and the error's close code.

Presence: any frame proves the agent alive; ``agent.heartbeat`` frames are always recorded,
other frames at most every half interval so a busy agent costs no extra writes. WebSocket
ping frames are answered by the server below the application and never reach it, so they
do not count: adapters send ``agent.heartbeat``. A socket that says no hello within
``hello_timeout_s``, or once greeted sends nothing for ``SILENT_INTERVALS`` heartbeat
intervals (never less than ``hello_timeout_s``), is closed with 1008 (``hello_timeout``,
``heartbeat_timeout``): a socket holds the hub's memory and a task for as long as it is open,
and a stranger's costs nothing to open. A greeted socket that closes, whichever side closes
it, marks its agent offline at once unless a newer socket holds the agent
(``hub.core.agents.presence.connection_closed``); a hub shutting down does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from quart import Websocket

from hub.config import Settings
from hub.core.agents.lifecycle import credential_revoked
from hub.core.agents.presence import (
    announce_connection,
    connection_closed,
    record_heartbeat,
    release_connection,
)
from hub.core.agents.registry import public_status, redeem_pairing_code
from hub.core.errors import Conflict, HubError, InvalidInput, Unauthorized
from hub.core.ids import new_id
from hub.core.log.bus import BusClosing, EventBus
from hub.core.log.epochs import resume
from hub.core.log.events import current_workspace
from hub.core.store.models import Agent
from hub.core.store.storage_faults import refused_value, storage_fault
from hub.host.lifecycle import SERVICE_RESTART
from hub.protocol.base import WireModel
from hub.protocol.lap import (
    AgentHello,
    AgentPaired,
    AgentWelcome,
    CompatibilityWarning,
    Envelope,
    MessageDelta,
    ResyncRequired,
)
from plugins.lap_gateway.chain import then
from plugins.lap_gateway.downlink import AgentDownlink
from plugins.lap_gateway.frames import (
    FrameRefused,
    close_reason,
    error_payload,
    hub_frame,
    read_envelope,
    read_payload,
    unknown_fields,
)
from plugins.lap_gateway.uplink import check_workspace, publish_delta, queue_uplink

logger = logging.getLogger(__name__)

T = TypeVar("T")

# A greeted socket with no frame for this many heartbeat intervals is closed: a live adapter
# sends one every interval, and the agent counts as offline after two (presence), so the
# third is a peer that is gone (a half-open connection) or only holding the socket open.
# Never less than the hello deadline, though: with a short interval (a hub tuned for quick
# presence) a busy moment on either side is not a peer gone, and a greeted socket may be
# quiet at least as long as a stranger's.
SILENT_INTERVALS = 3
# Frames of one agent taken in and not yet answered; past this, the socket is not read
# until the oldest is answered (backpressure on the agent).
MAX_FRAMES_IN_FLIGHT = 64

REPLACED = Conflict(
    "This agent connected again on another socket; this one is closed.",
    code="connection_replaced",
    hint="Run one adapter per agent credential.",
)

Reply = tuple[str, Unauthorized | None]
POLICY_VIOLATION = 1008
INTERNAL_ERROR = 1011


class SessionHost(Protocol):
    """What a session needs of the gateway that holds it (``plugins.lap_gateway.gateway``):
    the settings, the bus, and being counted open and let go."""

    settings: Settings
    bus: EventBus

    def opened(self, session: AgentSession) -> None: ...

    def closed(self, session: AgentSession) -> None: ...


class AgentSession:
    def __init__(
        self, gateway: SessionHost, socket: Websocket, agent: Agent | None, source: str | None
    ) -> None:
        self.gateway = gateway
        self.socket = socket
        self.agent = agent
        self.source = source
        self.finished = asyncio.Event()
        self._closed = False
        self._close_code: int | None = None  # the code this side closed with, if it did
        # A future, not an Event: the session waits on it beside its two tasks, where an
        # Event's wait() would be a third task kept by every idle socket.
        self._close_requested: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._send_lock = asyncio.Lock()
        self._last_presence = 0.0
        self._inflight: asyncio.Future[Any] | None = None
        # Answers not yet sent, oldest first, and the task sending them: it runs only while
        # some are waiting (done otherwise), so an idle socket keeps no second task.
        self._waiting: deque[asyncio.Future[Reply]] = deque()
        self._answering: asyncio.Task[None] | None = None
        self._last_logged: asyncio.Future[Reply] | None = None  # the last frame with an event

    # --- sending and closing ---------------------------------------------------------------

    async def send(self, text: str) -> None:
        async with self._send_lock:
            if not self._closed:
                await self.socket.send(text)

    async def send_error(self, error: HubError, envelope_id: str | None) -> None:
        await self.send(self._error_frame(error, envelope_id))

    async def close(
        self, code: int, error: HubError | None = None, envelope_id: str | None = None
    ) -> None:
        """Close once, after an ``error`` frame saying why; ends ``run``."""
        if self._closed:
            return
        self._close_code = code
        with contextlib.suppress(Exception):  # the peer may be gone already
            if error is not None:
                await self.send_error(error, envelope_id)
            async with self._send_lock:
                self._closed = True
                reason = close_reason(error) if error is not None else ""
                await self.socket.close(code, reason)
        self._closed = True
        if not self._close_requested.done():
            self._close_requested.set_result(None)

    def _ws(self) -> dict[str, Any]:
        return {"workspace_id": self.agent.workspace_id} if self.agent is not None else {}

    # --- the session -----------------------------------------------------------------------

    async def run(self) -> None:
        self.gateway.opened(self)
        try:
            greeted = await self._handshake()
            if greeted is not None:
                await self._serve(*greeted)
        finally:
            if self._inflight is not None and not self._inflight.done():
                await asyncio.wait([self._inflight])  # see _finish
            if self._waiting:  # events queued for this agent: stored before it counts as gone
                await asyncio.wait(self._waiting)
            self.gateway.closed(self)
            self.finished.set()

    async def _finish(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` to its end even if the session is cancelled meanwhile.

        A frame received is handled whole, even if the socket dies meanwhile: the agent
        resends it (same id) and gets ``duplicate: true``. Cancelling database work half-way
        is worse: Tortoise's clients take their connection lock (SQLite) or a pool
        connection (PostgreSQL) and then await BEGIN without giving it back on cancellation,
        which stalls every later query of the process. ``run`` waits for it before the
        session counts as ended, so shutdown never closes the database under it.
        """
        job = asyncio.ensure_future(work)
        self._inflight = job
        return await asyncio.shield(job)

    async def _handshake(self) -> tuple[Envelope, AgentHello] | None:
        deadline = self.gateway.settings.hello_timeout_s
        try:
            async with asyncio.timeout(deadline):
                envelope, hello = await self._read_hello()
        except TimeoutError:
            await self.close(
                POLICY_VIOLATION,
                InvalidInput(
                    f"No agent.hello within {deadline:g} s.",
                    code="hello_timeout",
                    hint="Send agent.hello as the first frame, right after connecting.",
                ),
            )
            return None
        self._log_unknown_fields(envelope, hello)
        outcome = await self._finish(self._identify(envelope, hello))
        if isinstance(outcome, HubError):
            await self.close(outcome.close_code, outcome, envelope.id)
            return None
        self.agent, credential = outcome
        if credential is not None:
            paired = AgentPaired(
                agent_id=self.agent.id, workspace_id=self.agent.workspace_id, credential=credential
            )
            await self.send(hub_frame("agent.paired", paired.wire(), **self._ws()))
        self._last_presence = time.monotonic()
        return envelope, hello

    async def _read_hello(self) -> tuple[Envelope, AgentHello]:
        while True:
            raw = await self.socket.receive()
            try:
                envelope = read_envelope(raw)
                if envelope.type != "agent.hello":
                    raise FrameRefused(
                        InvalidInput(
                            f"The first frame must be agent.hello, not {envelope.type}.",
                            code="hello_required",
                            hint="Send agent.hello first; see docs/protocol.md.",
                        ),
                        envelope.id,
                    )
                hello = read_payload(envelope)
            except FrameRefused as refused:
                await self.send_error(refused.error, refused.envelope_id)
                continue
            assert isinstance(hello, AgentHello)
            return envelope, hello

    async def _identify(
        self, envelope: Envelope, hello: AgentHello
    ) -> tuple[Agent, str | None] | HubError:
        """Who this is (pairing first if needed), or why not. It comes online as it takes
        its connection (``announce_connection``).

        Runs to its end (``_finish``). Returns the error instead of raising it, so a
        socket gone meanwhile leaves no exception unretrieved.
        """
        agent, credential = self.agent, None
        try:
            if agent is None:
                agent, credential = await self._pair(hello)
            check_workspace(agent, envelope)
        except HubError as error:
            return error
        return agent, credential

    async def _pair(self, hello: AgentHello) -> tuple[Agent, str]:
        if not hello.pairing_code:
            raise Unauthorized(
                "No credential and no pairing code.",
                code="credential_required",
                hint="Send 'Authorization: Bearer <credential>' on the upgrade request, or "
                "pair: agent.hello with pairingCode and name.",
            )
        if not hello.name:
            raise InvalidInput(
                "Pairing needs the name the agent proposes for itself.",
                code="name_required",
                hint="Add 'name' to the agent.hello payload.",
            )
        agent, credential = await redeem_pairing_code(
            hello.pairing_code,
            name=hello.name,
            runtime=hello.runtime,
            version=hello.agent_version,
            capabilities=list(hello.capabilities),
            secret_key=self.gateway.settings.secret_key,
            source=self.source,
        )
        logger.info("agent %s paired in workspace %s", agent.id, agent.workspace_id)
        return agent, credential

    async def _serve(self, envelope: Envelope, hello: AgentHello) -> None:
        agent = self.agent
        assert agent is not None
        session_id = new_id("event")
        try:
            connected_at = await self._finish(announce_connection(agent, session_id))
        except Exception as refused:  # revoked meanwhile, or the database is away
            refusal, revoked = self._refusal(refused, envelope.id)
            if revoked is not None:
                await self.close(revoked.close_code, revoked)
            else:
                fault = storage_fault(refused)
                await self.send(refusal)
                await self.close(fault.close_code if fault is not None else INTERNAL_ERROR)
            return
        downlink = AgentDownlink(
            agent.workspace_id,
            agent.id,
            bus=self.gateway.bus,
            send=self.send,
            session_id=session_id,
            connected_at=connected_at,
        )
        downlink.subscribe()  # before reading the log's position: nothing slips between
        try:
            after = await self._welcome(agent, hello)
            jobs: set[asyncio.Future[Any]] = {
                asyncio.create_task(downlink.run(after), name=f"lap-down-{agent.id}"),
                asyncio.create_task(self._uplinks(), name=f"lap-up-{agent.id}"),
                self._close_requested,
            }
            try:
                done, _ = await asyncio.wait(jobs, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for job in jobs:
                    job.cancel()
                await asyncio.gather(*jobs, return_exceptions=True)
            failure = next((job.exception() for job in done if job.exception()), None)
            fault = storage_fault(failure) if failure is not None else None
            if isinstance(failure, BusClosing):  # the hub is stopping
                await self.close(SERVICE_RESTART)
            elif fault is not None:
                # The database went away under the downlink: the agent retries, then resumes.
                logger.warning("session of agent %s ended: %s", agent.id, failure)
                await self.close(fault.close_code, fault)
            elif failure is not None:
                logger.error("session of agent %s failed", agent.id, exc_info=failure)
                await self.close(INTERNAL_ERROR, HubError("The hub hit an error; connect again."))
            elif downlink.replaced:
                logger.info("agent %s connected again; closing its older socket", agent.id)
                await self.close(REPLACED.close_code, REPLACED)
            elif not self._closed:  # the downlink saw agent.revoked
                logger.info("agent %s revoked; closing its socket", agent.id)
                error = credential_revoked(agent)
                await self.close(error.close_code, error)
        finally:
            downlink.close()
            if not downlink.replaced:
                # A hub that stops says nothing of presence, but lets the connection go:
                # the agent's return claims it without a word in the log.
                stopping = self._close_code == SERVICE_RESTART
                gone = self._let_go if stopping else self._note_gone
                await self._finish(gone(agent, session_id))

    async def _let_go(self, agent: Agent, session_id: str) -> None:
        try:
            await release_connection(agent, session_id)
        except Exception as error:  # its return then logs agent.connected: no harm
            logger.info("agent %s: connection not let go at shutdown: %s", agent.id, error)

    async def _note_gone(self, agent: Agent, session_id: str) -> None:
        """The socket closed (the peer went, or this side closed it): the agent is offline
        now, unless another socket holds it. A hub that stops says nothing: the agent comes
        back as soon as it is up again, and the sweeper judges one that does not."""
        try:
            if await connection_closed(agent, session_id):
                logger.info("agent %s: its socket closed; offline", agent.id)
        except Exception as error:  # the sweeper marks it offline later
            logger.warning("agent %s not marked offline at once: %s", agent.id, error)

    async def _welcome(self, agent: Agent, hello: AgentHello) -> int:
        """Send ``agent.welcome`` (and a resync if needed); returns where replay starts.

        The position is checked before the welcome is written: an agent ahead of the log in
        its epoch starts a new one (``hub.core.log.epochs``), and the welcome names it."""
        workspace = await current_workspace(agent.workspace_id)
        position = await resume(
            workspace, hello.epoch, hello.last_sequence or 0, client=f"agent {agent.id}"
        )
        workspace = position.workspace
        log_end = int(workspace.last_sequence)
        welcome = AgentWelcome(
            agent_id=agent.id,
            workspace_id=agent.workspace_id,
            heartbeat_interval_s=self.gateway.settings.heartbeat_interval_s,
            epoch=workspace.epoch,
            last_sequence=log_end,
            status=public_status(agent),  # online since announce_connection
        )
        await self.send(hub_frame("agent.welcome", welcome.wire(), **self._ws()))
        if position.resync is None:
            return position.replay_after
        resync = ResyncRequired(reason=position.resync, last_sequence=log_end)
        await self.send(hub_frame("system.resync_required", resync.wire(), **self._ws()))
        logger.info("agent %s must resync (%s) from %s", agent.id, position.resync, log_end)
        return position.replay_after

    # --- uplink frames ---------------------------------------------------------------------

    async def _uplinks(self) -> None:
        """Read frames and answer each, in the order they came.

        A frame is taken in (parsed, checked, its event queued behind the ones before it)
        before the next is read, but its answer is awaited by ``_answer_in_order``: an agent
        with many frames in flight gets them written in shared commits instead of one
        commit per round trip, and still sees its acks in its own order. A frame answered
        at once (a heartbeat, a refusal) with no answer waiting before it is answered here.
        """
        settings = self.gateway.settings
        silence = max(SILENT_INTERVALS * settings.heartbeat_interval_s, settings.hello_timeout_s)
        try:
            while not self._closed:
                try:
                    async with asyncio.timeout(silence):
                        raw = await self.socket.receive()
                except TimeoutError:
                    await self._close_silent(silence)
                    return
                if self._answering is not None and self._answering.done():
                    self._answering.result()  # a failed send ends the session, as it would here
                frame = _read(raw)
                if self._must_wait(frame):
                    answer = await self._finish(self._take_after_waiting(frame))
                else:  # nearly every frame: no task of its own needed (see _finish)
                    answer = self._take(frame)
                if answer.done() and not self._waiting:
                    if not await self._answer(answer.result()):
                        return
                    continue
                self._waiting.append(answer)
                if self._answering is None or self._answering.done():
                    self._answering = asyncio.create_task(self._answer_in_order())
                if len(self._waiting) >= MAX_FRAMES_IN_FLIGHT:
                    await asyncio.shield(self._answering)  # read on once every answer is out
        finally:
            if self._answering is not None:
                self._answering.cancel()
                await asyncio.gather(self._answering, return_exceptions=True)

    async def _close_silent(self, silence: float) -> None:
        agent_id = self.agent.id if self.agent is not None else "(pairing)"
        logger.info("agent %s sent nothing for %g s; closing its socket", agent_id, silence)
        await self.close(
            POLICY_VIOLATION,
            InvalidInput(
                f"No frame for {silence:g} s.",
                code="heartbeat_timeout",
                hint="Send agent.heartbeat every heartbeatIntervalS seconds; connect again.",
            ),
        )

    async def _answer_in_order(self) -> None:
        """Send the waiting answers oldest first; ends (done) when none is left."""
        while self._waiting and not self._closed:
            if not await self._answer(await asyncio.shield(self._waiting[0])):
                return
            self._waiting.popleft()  # only once sent: a later answer must not overtake

    async def _answer(self, reply: Reply) -> bool:
        """Send one answer; False when it is a revocation, and the socket is closed."""
        frame, revoked = reply
        if revoked is not None:
            await self.close(revoked.close_code, revoked)
            return False
        await self.send(frame)
        return True

    def _must_wait(self, frame: Envelope | FrameRefused) -> bool:
        """Whether taking ``frame`` in awaits something: stamping the agent's presence (every
        heartbeat, other frames at most twice an interval), or, for a delta, the frame with
        an event before it. Such frames run in a task (``_finish``); a task per frame was a
        twentieth of the hub's time under load, so the others are taken in directly."""
        if isinstance(frame, FrameRefused):
            return self._presence_due(heartbeat=False)
        if self._presence_due(heartbeat=frame.type == "agent.heartbeat"):
            return True
        return frame.type == "message.delta" and not (
            self._last_logged is None or self._last_logged.done()
        )

    async def _take_after_waiting(self, frame: Envelope | FrameRefused) -> asyncio.Future[Reply]:
        """``_take``, once what ``_must_wait`` named is done."""
        envelope = None if isinstance(frame, FrameRefused) else frame
        kind = envelope.type if envelope is not None else None
        try:
            await self._note_alive(heartbeat=kind == "agent.heartbeat")
        except Exception as error:
            return _settled(self._refusal(error, envelope.id if envelope is not None else None))
        if kind == "message.delta" and self._last_logged is not None:
            # Streaming text keeps its place among the agent's events: the ones sent before
            # it are published first, and the next frame is read only after it.
            await asyncio.wait([self._last_logged])
        return self._take(frame)

    def _take(self, frame: Envelope | FrameRefused) -> asyncio.Future[Reply]:
        """Check the frame and do what it asks; the future gives the frame answering it
        (never raises), or the revocation noticed meanwhile."""
        if isinstance(frame, FrameRefused):
            return _settled(self._refusal(frame, None))
        envelope = frame
        agent = self.agent
        assert agent is not None
        try:
            check_workspace(agent, envelope)
            payload = read_payload(envelope)
            self._log_unknown_fields(envelope, payload)
            if payload is None:
                warning = CompatibilityWarning(
                    id=envelope.id,
                    code="unknown_type",
                    message=f"This hub does not know {envelope.type!r}; the frame was ignored.",
                )
                return _settled((hub_frame("warning", warning.wire(), **self._ws()), None))
            acting = self._act(agent, envelope, payload)
        except Exception as error:
            return _settled(self._refusal(error, envelope.id))
        if acting is None:  # nothing to store: answered at once
            ack = {"id": envelope.id, "duplicate": False}
            return _settled((hub_frame("ack", ack, **self._ws()), None))
        self._last_logged = then(
            acting,
            lambda ack: (hub_frame("ack", ack, **self._ws()), None),
            lambda error: self._refusal(error, envelope.id),
        )
        return self._last_logged

    def _refusal(self, error: Exception, envelope_id: str | None) -> Reply:
        """The answer to a frame that failed: an error frame, or the revocation to close on."""
        if isinstance(error, FrameRefused):
            return self._error_frame(error.error, error.envelope_id), None
        if isinstance(error, Unauthorized) and error.code == "credential_revoked":
            return "", error
        if isinstance(error, HubError):
            return self._error_frame(error, envelope_id), None
        refused = refused_value(error)
        if refused is not None:
            return self._error_frame(refused, envelope_id), None
        fault = storage_fault(error)
        if fault is not None:
            # The database is down, read-only or full: the agent resends after this.
            logger.warning("uplink %s not stored: %s", envelope_id, error)
            return self._error_frame(fault, envelope_id), None
        agent_id = self.agent.id if self.agent is not None else "(pairing)"
        logger.error("uplink %s of agent %s failed", envelope_id, agent_id, exc_info=error)
        failed = HubError("The hub could not process this frame.")
        return self._error_frame(failed, envelope_id), None

    def _error_frame(self, error: HubError, envelope_id: str | None) -> str:
        return hub_frame("error", error_payload(error, envelope_id), **self._ws())

    def _act(
        self, agent: Agent, envelope: Envelope, payload: WireModel
    ) -> asyncio.Future[dict[str, Any]] | None:
        """Do what the frame asks now: queue its event (the future gives its ``ack`` payload
        once stored), or publish a delta or note a heartbeat (None)."""
        if envelope.type == "agent.hello":
            raise InvalidInput(
                "This socket has said hello already.",
                code="already_greeted",
                hint="Reconnect to start a new session.",
            )
        if isinstance(payload, MessageDelta):
            publish_delta(agent, envelope, payload, self.gateway.bus)
            return None
        if envelope.type == "agent.heartbeat":
            return None
        return queue_uplink(agent, envelope, payload)

    def _presence_due(self, *, heartbeat: bool) -> bool:
        """Whether this frame should record that the agent is alive: every heartbeat does,
        other frames at most twice a heartbeat interval."""
        every = self.gateway.settings.heartbeat_interval_s / 2
        return heartbeat or time.monotonic() - self._last_presence >= every

    async def _note_alive(self, *, heartbeat: bool) -> None:
        agent = self.agent
        assert agent is not None
        if not self._presence_due(heartbeat=heartbeat):
            return
        self._last_presence = time.monotonic()
        try:
            await record_heartbeat(agent)
        except Unauthorized:
            raise
        except Exception as error:  # presence must not cost the frame; the next beat retries
            if storage_fault(error) is None:
                logger.exception("recording a heartbeat of agent %s failed", agent.id)
            else:
                logger.warning("heartbeat of agent %s not recorded: %s", agent.id, error)

    def _log_unknown_fields(self, envelope: Envelope, payload: WireModel | None) -> None:
        names = unknown_fields(envelope, payload)
        if names:
            logger.info(
                "agent %s sent %s %s with fields this hub does not know: %s",
                self.agent.id if self.agent else "(pairing)",
                envelope.type,
                envelope.id,
                ", ".join(names),
            )


def _read(raw: str | bytes) -> Envelope | FrameRefused:
    try:
        return read_envelope(raw)
    except FrameRefused as refused:
        return refused


def _settled(reply: Reply) -> asyncio.Future[Reply]:
    answer: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    answer.set_result(reply)
    return answer
