"""Presence (spec §7.4): heartbeats, offline after two missed, failing after a grace period.

Presence is state, kept current on the agent's row; the log records a change of it only
where a person needs it: an agent with open work (a task queued, running or waiting for a
person) that goes offline or comes back. An idle agent's comings and goings are shown live
(a transient ``agent.online`` / ``agent.offline`` frame on the bus, ``sequence`` 0, like
streaming text) and leave nothing behind: a fleet that reconnects after a restart or a
network blip used to write an event per agent per connect and per disconnect, forever.

* Each socket that says hello takes the agent's one connection (``Agent.session_id``),
  across every hub process (``announce_connection``). When no socket holds it (the last
  one closed, or its hub stopped), the hello just claims it. When one does, that socket may
  still be alive (a half-open connection, a second process with the same credential), so
  the hello logs ``agent.connected``: the older socket, wherever it is, reads it in order
  among its downlink events and closes, and nothing after it reaches that socket.
* A connected agent's heartbeats stamp ``Agent.last_heartbeat_at``; heartbeats themselves
  are not logged. The first heartbeat of an agent that was not online brings it online.
* A socket that closes while it holds the agent's connection marks the agent ``offline``
  at once (``reason: connection_closed``, ``connection_closed``) and lets the connection
  go: an agent killed mid-task shows as lost the moment its socket goes, not two intervals
  later. A socket that was replaced by a newer one says nothing: the agent is there.
* ``PresenceSweeper`` marks an online agent ``offline`` once two heartbeat intervals pass
  without one: the death a socket does not report (a half-open connection, a machine gone).
  Its tasks keep their status: views show "connection lost" with the last heartbeat
  (``connection_lost``).
* When the grace period has passed since the last heartbeat and the agent is still not
  back, its running tasks fail with error ``agent_unreachable`` (``task.status_changed`` by
  ``system``). Tasks waiting for a person are left alone: the state machine (spec §6.2) has
  no move from ``waiting_for_human`` to ``failed``, and the answer still reaches the agent
  when it returns. Queued tasks wait for it too.

Several hub processes may each run a sweeper, and an agent may have several sockets: a
change that is not logged is one conditional update of the agent's row (online only where
it was offline, offline only where it was online with the same last heartbeat, or the same
session), so it happens once; a logged one has a deterministic envelope id and its
handler re-checks the row under the workspace's lock, so it is logged once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tortoise.expressions import Case, Subquery, When
from tortoise.queryset import QuerySet

from hub.core.agents.lifecycle import credential_revoked
from hub.core.errors import Conflict, HubError
from hub.core.log.bus import DEFAULT_BUS, PublishedEvent
from hub.core.log.events import AppendResult, append_event, last_sequence, queue_append
from hub.core.log.group_commit import GroupCommit, Request
from hub.core.store.models import Agent, AgentStatus, Task
from hub.core.store.transactions import in_transaction
from hub.core.task_states import TaskStatus
from hub.core.workers import Periodic
from hub.protocol.clock import iso, utcnow, wire_time
from hub.protocol.lap import PROTOCOL_VERSION

logger = logging.getLogger(__name__)

MISSED_HEARTBEATS_FOR_OFFLINE = 2
UNREACHABLE = "agent_unreachable"
CONNECTION_CLOSED = "connection_closed"
_BATCH = 500
# The work a person would miss if its agent were gone: presence changes are logged then.
_MAY_COME_ONLINE = [AgentStatus.PENDING, AgentStatus.OFFLINE]  # just paired, or back
_OPEN_WORK = [TaskStatus.QUEUED.value, TaskStatus.RUNNING.value, TaskStatus.WAITING_FOR_HUMAN.value]


def connection_lost(agent: Agent) -> dict[str, Any] | None:
    """What to show on an offline agent and on its tasks, or ``None`` if online."""
    if agent.status != AgentStatus.OFFLINE or agent.last_heartbeat_at is None:
        return None
    return {
        "code": "agent_connection_lost",
        "message": "Agent connection lost",
        "lastHeartbeatAt": iso(agent.last_heartbeat_at),
    }


async def record_heartbeat(agent: Agent) -> bool:
    """Note that ``agent`` is alive now; returns True when this brought it online.

    Raises ``Unauthorized`` (``credential_revoked``) if the agent was revoked meanwhile,
    which is how a socket in another hub process learns of a revocation.
    """
    # The common case: the agent is online and stays so, and its stamp shares one UPDATE
    # with the other agents' heartbeats that arrived meanwhile.
    if await _ONLINE_STAMPS.submit(None, agent.id):
        return False
    now = utcnow()
    current = await Agent.filter(id=agent.id).first()
    if current is None or current.status == AgentStatus.REVOKED:
        raise credential_revoked(current or agent)
    if not await has_open_work(agent.id):
        # Nobody waits on this agent: the change is state, shown live, not logged.
        came = await Agent.filter(id=agent.id, status__in=_MAY_COME_ONLINE).update(
            status=AgentStatus.ONLINE, last_heartbeat_at=now
        )
        if not came:  # another socket brought it online first, or it was revoked
            if await Agent.filter(id=agent.id, status=AgentStatus.REVOKED).exists():
                raise credential_revoked(current)
            await Agent.filter(id=agent.id).update(last_heartbeat_at=now)
            return False
        _show(current, "agent.online", {"agentId": agent.id, "name": current.name})
        return True
    await Agent.filter(id=agent.id).update(last_heartbeat_at=now)
    try:
        await append_event(
            agent.workspace_id,
            "agent.online",
            {"agentId": agent.id, "name": current.name},
            actor=f"agent:{agent.id}",
        )
    except Conflict as error:
        if error.code != "already_online":  # another socket of this agent was first
            raise
        return False
    return True


def _open_work(*agent_ids: str) -> QuerySet[Task]:
    return Task.filter(target_agent_id__in=agent_ids, status__in=_OPEN_WORK)


async def has_open_work(agent_id: str) -> bool:
    return await _open_work(agent_id).exists()


def _show(agent: Agent, type: str, payload: dict[str, Any]) -> None:
    """A presence change live on every surface (and, through the relay, in every hub
    process), without a place in the log: a frame with ``sequence`` 0."""
    envelope = {
        "id": f"presence-{agent.id}-{type}-{utcnow().timestamp()}",
        "type": type,
        "version": PROTOCOL_VERSION,
        "occurredAt": wire_time(utcnow()),
        "workspaceId": agent.workspace_id,
        "sequence": 0,
        "actor": "system" if type == "agent.offline" else f"agent:{agent.id}",
        "payload": payload,
    }
    DEFAULT_BUS.publish(
        PublishedEvent(
            workspace_id=agent.workspace_id,
            sequence=0,
            type=type,
            recipient_agent_id=None,
            envelope=envelope,
        )
    )


async def announce_connection(agent: Agent, session_id: str) -> int:
    """Take the agent's one connection for ``session_id``; returns the log's position from
    which a later ``agent.connected`` of another socket means this one was replaced.

    The newest connection wins, in every hub process alike. When no socket holds the
    agent, the claim is an update of its row and nothing is logged (the position is read
    before the claim, so a replacement that comes after it is sequenced after it). When
    one does, ``agent.connected`` is logged and its sequence returned: the older socket
    reads it among its downlink events and closes, and the log's order decides, so of
    two sockets opened at once in two processes exactly one stays. Raises
    ``Unauthorized`` (``credential_revoked``) for a revoked agent. Leaves the agent online,
    on its row and on ``agent``.
    """
    position = await last_sequence(agent.workspace_id)
    # The common return, and all of a fleet's after a network blip: an idle agent that no
    # socket holds. Taking its connection and bringing it online is then one update, which
    # it shares with the other agents saying hello meanwhile.
    if await _IDLE_CLAIMS.submit(None, (agent.id, session_id)):
        _show(agent, "agent.online", {"agentId": agent.id, "name": agent.name})
        agent.status = AgentStatus.ONLINE
        return position
    claimed = (
        await Agent.filter(id=agent.id, session_id=None)
        .exclude(status=AgentStatus.REVOKED)
        .update(session_id=session_id)
    )
    if claimed:
        await record_heartbeat(agent)
        agent.status = AgentStatus.ONLINE
        return position
    result = await append_event(
        agent.workspace_id,
        "agent.connected",
        {"agentId": agent.id, "sessionId": session_id},
        actor=f"agent:{agent.id}",
    )
    # The socket this one replaces may have closed between this one's hello and its
    # announcement, and marked the agent offline then; the agent is here, so it is online.
    await record_heartbeat(agent)
    agent.status = AgentStatus.ONLINE
    return result.sequence


async def release_connection(agent: Agent, session_id: str) -> None:
    """The hub is stopping with ``session_id`` open: let the connection go, so the agent's
    return claims it without a word in the log. Its presence stays as it is: the agent
    comes back in a moment, and the sweeper judges one that does not."""
    await Agent.filter(id=agent.id, session_id=session_id).update(session_id=None)


async def connection_closed(agent: Agent, session_id: str) -> bool:
    """The socket of ``session_id`` closed: mark the agent offline now; True if this did.

    Nothing changes unless that session still holds the agent's connection and the agent
    is online: a socket replaced by a newer one, a revoked agent or one the sweeper marked
    already say nothing. A logged change is checked again under the workspace's lock, so
    a socket announced in another process meanwhile still wins.
    """
    # The common close, and all of a fleet's as it leaves: an idle agent whose socket still
    # holds it, gone offline in one update shared with the others closing meanwhile.
    went = await _IDLE_CLOSES.submit(None, (agent.id, session_id))
    if went is not None:
        closed = {"reason": CONNECTION_CLOSED, "sessionId": session_id}
        agent.last_heartbeat_at = went
        _show(agent, "agent.offline", _offline_payload(agent, 0, closed))
        return True
    current = await Agent.filter(id=agent.id).first()
    if (
        current is None
        or current.status != AgentStatus.ONLINE
        or current.session_id != session_id
        or current.last_heartbeat_at is None
    ):
        await Agent.filter(id=agent.id, session_id=session_id).update(session_id=None)
        return False
    try:
        return await _go_offline(
            current, missed=0, closed={"reason": CONNECTION_CLOSED, "sessionId": session_id}
        )
    except Conflict:  # it connected again, or came back, or a sweeper was first
        return False


async def _go_offline(agent: Agent, *, missed: int, closed: dict[str, str] | None = None) -> bool:
    """Mark ``agent`` offline as its row reads now (logged if it has open work); True if
    this did. A closed socket also lets the agent's connection go."""
    if await has_open_work(agent.id):
        result = await _log_offline(agent, missed=missed, closed=closed)
        return not result.duplicate
    still = Agent.filter(id=agent.id, status=AgentStatus.ONLINE)
    if closed is not None:  # its own socket: whatever heartbeat came last
        went = await still.filter(session_id=closed["sessionId"]).update(
            status=AgentStatus.OFFLINE, session_id=None
        )
    else:  # the sweeper's judgement holds only if no heartbeat came since it looked
        went = await still.filter(last_heartbeat_at=agent.last_heartbeat_at).update(
            status=AgentStatus.OFFLINE
        )
    if went:
        _show(agent, "agent.offline", _offline_payload(agent, missed, closed))
    return bool(went)


def _offline_payload(agent: Agent, missed: int, closed: dict[str, str] | None) -> dict[str, Any]:
    last = agent.last_heartbeat_at
    assert last is not None  # an online agent has had a heartbeat
    return {
        "agentId": agent.id,
        "name": agent.name,
        "lastHeartbeatAt": iso(last),
        "missedHeartbeats": missed,
        **(closed or {}),
    }


def _log_offline(
    agent: Agent, *, missed: int, closed: dict[str, str] | None = None
) -> asyncio.Future[AppendResult]:
    """Queue ``agent.offline`` for ``agent`` as its row reads now. The envelope id names
    the last heartbeat, whoever logs it: a sweeper and a closed socket that judge the same
    silence write one event."""
    last = agent.last_heartbeat_at
    assert last is not None  # an online agent has had a heartbeat
    return queue_append(
        agent.workspace_id,
        "agent.offline",
        _offline_payload(agent, missed, closed),
        actor="system",
        envelope_id=f"offline-{agent.id}-{int(last.timestamp() * 1_000_000)}",
    )


async def _stamp_online(_key: Hashable, batch: list[Request[str]]) -> None:
    """Stamp every agent of ``batch`` that is online; each request learns whether its agent
    was (False sends it the slow way: revoked, or coming online)."""
    ids = {request.work for request in batch}
    stamped = await Agent.filter(id__in=ids, status=AgentStatus.ONLINE).update(
        last_heartbeat_at=utcnow()
    )
    if stamped == len(ids):
        online = ids
    else:  # rare: an agent is coming online or was revoked; ask which
        rows = Agent.filter(id__in=ids, status=AgentStatus.ONLINE).values_list("id", flat=True)
        online = {str(agent_id) for agent_id in await rows}
    for request in batch:
        request.settle(request.work in online)


# 5,000 idle agents heartbeating every 5 s would cost 1,000 UPDATEs a second one by one.
_ONLINE_STAMPS: GroupCommit[str] = GroupCommit(_stamp_online, max_batch=500)


async def _claim_idle(_key: Hashable, batch: list[Request[tuple[str, str]]]) -> None:
    """Give each (agent, session) of ``batch`` the agent's connection and bring it online,
    in one update, where the agent is idle and no socket holds it; each request learns
    whether its agent was taken so (False sends it the slow way: held by another socket,
    with open work, revoked). Of two sockets of one agent in a batch the first goes in the
    update; the second, the slow way, replaces it, as if it had come a moment later."""
    sessions: dict[str, str] = {}
    for request in batch:
        sessions.setdefault(request.work[0], request.work[1])
    ids = list(sessions)
    await (
        Agent.filter(id__in=ids, session_id=None, status__in=_MAY_COME_ONLINE)
        .exclude(id__in=Subquery(_open_work(*ids).values("target_agent_id")))
        .update(
            session_id=Case(*(When(id=a, then=s) for a, s in sessions.items())),
            status=AgentStatus.ONLINE,
            last_heartbeat_at=utcnow(),
        )
    )
    # Which were taken: a session id is new with each socket, so holding it says so.
    held = Agent.filter(id__in=ids, session_id__in=list(sessions.values()))
    taken = {(str(a), str(s)) for a, s in await held.values_list("id", "session_id")}
    for request in batch:
        request.settle(request.work in taken)


_IDLE_CLAIMS: GroupCommit[tuple[str, str]] = GroupCommit(_claim_idle, max_batch=500)


async def _close_idle(_key: Hashable, batch: list[Request[tuple[str, str]]]) -> None:
    """Mark offline, in one statement, every agent of ``batch`` that is online, idle and
    held by the (agent, session) whose socket closed, and let its connection go; each
    request learns its agent's last heartbeat if it went so, else None (it goes the slow
    way: replaced by a newer socket, offline already, or with open work to log)."""
    sessions: dict[str, str] = {}
    for request in batch:
        sessions.setdefault(request.work[0], request.work[1])
    async with in_transaction() as connection:
        postgres = connection.capabilities.dialect == "postgres"
        count = len(sessions)
        wanted = 3 * count + 2 + len(_OPEN_WORK)
        marks = [f"${n}" for n in range(1, wanted + 1)] if postgres else ["?"] * wanted
        pairs = ", ".join(f"({marks[2 * n]}, {marks[2 * n + 1]})" for n in range(count))
        agents = ", ".join(marks[2 * count : 3 * count])
        online, offline, *open_work = marks[3 * count :]
        rows = await connection.execute_query_dict(
            f"UPDATE agent SET status = {offline}, session_id = NULL "
            f"WHERE (id, session_id) IN (VALUES {pairs}) AND status = {online} "
            "AND last_heartbeat_at IS NOT NULL AND id NOT IN (SELECT target_agent_id FROM task "
            f"WHERE target_agent_id IN ({agents}) AND status IN ({', '.join(open_work)})) "
            "RETURNING id, last_heartbeat_at",
            [
                *(part for pair in sessions.items() for part in pair),
                *sessions,
                AgentStatus.ONLINE.value,
                AgentStatus.OFFLINE.value,
                *_OPEN_WORK,
            ],
        )
    stamp = Agent._meta.fields_map["last_heartbeat_at"]
    went = {str(row["id"]): stamp.to_python_value(row["last_heartbeat_at"]) for row in rows}
    for request in batch:
        agent_id, session_id = request.work
        request.settle(went.get(agent_id) if sessions[agent_id] == session_id else None)


_IDLE_CLOSES: GroupCommit[tuple[str, str]] = GroupCommit(_close_idle, max_batch=500)


@dataclass
class SweepReport:
    offline: list[str] = field(default_factory=list)  # agent ids marked offline
    failed: list[str] = field(default_factory=list)  # task ids failed as unreachable


class PresenceSweeper:
    """Marks silent agents offline and fails the running tasks of unreachable ones.

    ``start`` runs ``sweep`` every ``period_s`` in a background task until ``stop``, which
    waits for the sweep in progress: call it before the database closes.
    """

    def __init__(
        self,
        *,
        heartbeat_interval_s: float,
        grace_period_s: float,
        period_s: float | None = None,
    ) -> None:
        self.offline_after = timedelta(seconds=MISSED_HEARTBEATS_FOR_OFFLINE * heartbeat_interval_s)
        self.grace_period = timedelta(seconds=grace_period_s)
        # A quarter interval keeps "offline" within 2.25 intervals of the last heartbeat.
        self.period_s = period_s or min(max(heartbeat_interval_s / 4, 0.05), 5.0)
        self._job = Periodic("presence sweep", self.period_s, self._sweep_and_say)

    async def sweep(self, now: datetime | None = None) -> SweepReport:
        now = now or utcnow()
        report = SweepReport()
        await self._mark_offline(now, report)
        await self._fail_unreachable(now, report)
        return report

    async def _mark_offline(self, now: datetime, report: SweepReport) -> None:
        silent = await Agent.filter(
            status=AgentStatus.ONLINE, last_heartbeat_at__lt=now - self.offline_after
        ).limit(_BATCH)
        # Together, so a hundred agents gone at once share a commit or two.
        changes = [_go_offline(agent, missed=MISSED_HEARTBEATS_FOR_OFFLINE) for agent in silent]
        outcomes = await asyncio.gather(*changes, return_exceptions=True)
        for agent, outcome in zip(silent, outcomes, strict=True):
            if isinstance(outcome, Conflict):  # it came back, or another sweeper was first
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome:
                report.offline.append(agent.id)

    async def _fail_unreachable(self, now: datetime, report: SweepReport) -> None:
        unreachable = Agent.filter(
            status__in=[AgentStatus.OFFLINE, AgentStatus.REVOKED],
            last_heartbeat_at__lt=now - self.grace_period,
        ).values("id")
        tasks = await Task.filter(
            status=TaskStatus.RUNNING.value, target_agent_id__in=Subquery(unreachable)
        ).limit(_BATCH)
        for task in tasks:
            agent = await Agent.filter(id=task.target_agent_id).first()
            last = iso(agent.last_heartbeat_at) if agent else None
            try:
                await append_event(
                    task.workspace_id,
                    "task.status_changed",
                    {
                        "taskId": task.id,
                        "status": TaskStatus.FAILED.value,
                        "error": UNREACHABLE,
                        "reason": UNREACHABLE,
                        "lastHeartbeatAt": last,
                    },
                    actor="system",
                    task_id=task.id,
                    envelope_id=f"unreachable-{task.id}",
                )
            except HubError as error:  # the task moved on meanwhile
                logger.info("not failing task %s as unreachable: %s", task.id, error.code)
                continue
            report.failed.append(task.id)

    @property
    def running(self) -> bool:
        return self._job.running

    def start(self) -> None:
        self._job.start()

    async def stop(self) -> None:
        await self._job.stop()

    async def _sweep_and_say(self) -> None:
        report = await self.sweep()
        if report.offline or report.failed:
            logger.info(
                "presence: %d agent(s) offline, %d task(s) failed as unreachable",
                len(report.offline),
                len(report.failed),
            )


__all__ = [
    "CONNECTION_CLOSED",
    "MISSED_HEARTBEATS_FOR_OFFLINE",
    "UNREACHABLE",
    "PresenceSweeper",
    "SweepReport",
    "announce_connection",
    "connection_closed",
    "connection_lost",
    "iso",
    "record_heartbeat",
    "release_connection",
]
