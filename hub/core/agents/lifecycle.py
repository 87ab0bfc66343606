"""How agent lifecycle events change the agent's own row, in the transaction that logs them.

``agent.paired``, ``agent.confirmed``, ``agent.online``, ``agent.offline``,
``agent.connected`` and ``agent.revoked`` each record a change of an ``Agent`` (an entity the
hub owns, holding a credential hash the log never sees). The change and its event commit
together: a handler here runs inside ``append_event``'s transaction, after the workspace's
sequence row is locked, and refuses the event with a ``HubError`` when the row is not in a
state the event can apply to, so a race (two sweepers, a heartbeat landing as the agent is
marked offline, a socket closing as the agent connects again on another, a code redeemed
twice) leaves one event and one change, never two.

Entities are not rebuilt from the log, so ``rebuild_projections`` does not run these.
"""

from __future__ import annotations

from datetime import datetime

from hub.core.errors import Conflict, Gone, InvalidInput, NotFound, Unauthorized
from hub.core.log import bulk_inserts
from hub.core.log.handlers import Connection, EventHandlers
from hub.core.store.models import Agent, AgentStatus, Event, PairingCode
from hub.core.store.remote_models import RemoteAgent

handlers = EventHandlers()

AGENT_EVENT_TYPES = frozenset(
    {
        "agent.paired",
        "agent.remote_added",
        "agent.confirmed",
        "agent.online",
        "agent.offline",
        "agent.revoked",
        "agent.connected",
    }
)


def credential_revoked(agent: Agent) -> Unauthorized:
    return Unauthorized(
        f"The credential of agent {agent.name} ({agent.id}) was revoked.",
        code="credential_revoked",
        hint="Pair the agent again with a new code (Agents page, or `lineup pair`).",
    )


def _actor_may_write(agent_id: str) -> tuple[str, str]:
    return ("agent not revoked", agent_id)


async def refuse_revoked_actor(event: Event, connection: Connection) -> None:
    """Refuse any event by an agent that is revoked, read in the append's transaction.

    An agent's frames are queued before they are written, so some may still be waiting
    when its revocation commits; the workspace's log is written one transaction at a time,
    so each of those reads the revocation here, and none sequenced after it is stored.
    Read once per agent and group commit, again after a revocation in the same batch.
    """
    kind, _, agent_id = event.actor.partition(":")
    if kind != "agent" or not bulk_inserts.once(_actor_may_write(agent_id)):
        return
    agent = (
        await Agent.filter(id=agent_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .only("id", "name", "status")
        .first()
    )
    if agent is not None and agent.status == AgentStatus.REVOKED:
        raise credential_revoked(agent)


async def _locked_agent(event: Event, connection: Connection) -> Agent:
    agent_id = event.payload.get("agentId")
    agent = (
        await Agent.filter(id=agent_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .select_for_update()
        .first()
    )
    if agent is None:
        raise NotFound(
            f"Agent {agent_id} does not exist in this workspace.", code="agent_not_found"
        )
    return agent


@handlers.on("agent.paired")
async def _paired(event: Event, connection: Connection) -> None:
    payload = event.payload
    agent = await Agent.create(
        using_db=connection,
        id=payload["agentId"],
        workspace_id=event.workspace_id,
        name=payload["name"],
        runtime=payload.get("runtime") or "",
        version=payload.get("version") or "",
        capabilities=list(payload.get("capabilities") or []),
        status=AgentStatus.PENDING,
        created_at=event.recorded_at,
    )
    # Claiming the code is a conditional update: of two agents redeeming one code at the
    # same moment, exactly one sees a row change.
    claimed = await (
        PairingCode.filter(
            id=payload["pairingCodeId"],
            workspace_id=event.workspace_id,
            used_at=None,
            expires_at__gt=event.recorded_at,
        )
        .using_db(connection)
        .update(used_at=event.recorded_at, agent_id=agent.id)
    )
    if not claimed:
        code = await PairingCode.filter(id=payload["pairingCodeId"]).using_db(connection).first()
        if code is not None and code.used_at is None:
            raise pairing_code_expired()
        raise pairing_code_used()


@handlers.on("agent.remote_added")
async def _remote_added(event: Event, connection: Connection) -> None:
    # A person added it by URL (or configuration pinned it): named by its card, and
    # confirmed by that act, so it never waits as "pending". Its key never enters the log:
    # hub.core.agents.remote seals it into the RemoteAgent row after this commits.
    payload = event.payload
    remote = payload["remote"]
    if await (
        RemoteAgent.filter(workspace_id=event.workspace_id, url=remote["url"])
        .using_db(connection)
        .exists()
    ):
        raise Conflict("This remote agent was added already.", code="remote_agent_exists")
    await Agent.create(
        using_db=connection,
        id=payload["agentId"],
        workspace_id=event.workspace_id,
        name=payload["name"],
        runtime=payload.get("runtime") or "a2a",
        version=payload.get("version") or "",
        capabilities=list(payload.get("capabilities") or []),
        status=AgentStatus.ONLINE,
        created_at=event.recorded_at,
        confirmed_at=event.recorded_at,
    )
    await RemoteAgent.create(
        using_db=connection,
        id=payload["agentId"],
        workspace_id=event.workspace_id,
        url=remote["url"],
        endpoint_url=remote["endpointUrl"],
        protocol_version=remote["protocolVersion"],
        streaming=bool(remote.get("streaming")),
        card=remote.get("card") or {},
        pinned=bool(remote.get("pinned")),
        auth_scheme=remote.get("authScheme") or "",
        last_contact_at=event.recorded_at,
        created_at=event.recorded_at,
    )


@handlers.on("agent.confirmed")
async def _confirmed(event: Event, connection: Connection) -> None:
    agent = await _locked_agent(event, connection)
    if agent.status == AgentStatus.REVOKED:
        raise Conflict(
            f"Agent {agent.name} ({agent.id}) was revoked; it cannot be confirmed.",
            code="agent_revoked",
            hint="Pair the agent again with a new code, then confirm the new one.",
        )
    name = event.payload.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidInput("The payload needs 'name'.")
    agent.name = name
    agent.confirmed_at = agent.confirmed_at or event.recorded_at
    await agent.save(using_db=connection, update_fields=["name", "confirmed_at"])


@handlers.on("agent.online")
async def _online(event: Event, connection: Connection) -> None:
    agent = await _locked_agent(event, connection)
    if agent.status == AgentStatus.REVOKED:
        raise credential_revoked(agent)
    if agent.status == AgentStatus.ONLINE:
        raise Conflict(f"Agent {agent.id} is online already.", code="already_online")
    agent.status = AgentStatus.ONLINE
    await agent.save(using_db=connection, update_fields=["status"])


@handlers.on("agent.offline")
async def _offline(event: Event, connection: Connection) -> None:
    agent = await _locked_agent(event, connection)
    if agent.status != AgentStatus.ONLINE:
        raise Conflict(f"Agent {agent.id} is not online.", code="not_online")
    closed = event.payload.get("sessionId")
    if closed is not None and closed != agent.session_id:
        # A closed socket speaks for the agent only while it held the connection: a newer
        # socket (in this process or another) took over, and the agent is there.
        raise Conflict(f"Agent {agent.id} connected again since.", code="connected_again")
    seen = event.payload.get("lastHeartbeatAt")
    if (
        isinstance(seen, str)
        and agent.last_heartbeat_at is not None
        and agent.last_heartbeat_at > datetime.fromisoformat(seen)
    ):
        # A heartbeat arrived after the sweeper looked: the agent is alive after all.
        raise Conflict(f"Agent {agent.id} sent a heartbeat since.", code="agent_came_back")
    agent.status = AgentStatus.OFFLINE
    if closed is not None:  # its socket closed: the agent's next hello claims the connection
        agent.session_id = None
    await agent.save(using_db=connection, update_fields=["status", "session_id"])


@handlers.on("agent.connected")
async def _connected(event: Event, connection: Connection) -> None:
    # A socket of the agent took over (hub.core.agents.presence.announce_connection). It is
    # addressed to the agent, so every socket of it, in any hub process, reads it in order
    # among its downlink events and knows whether a newer one holds the agent now.
    agent_id = event.payload.get("agentId")
    session_id = event.payload.get("sessionId")
    if event.actor != f"agent:{agent_id}" or not session_id:
        raise InvalidInput("agent.connected is an agent's own, with its 'sessionId'.")
    event.recipient_agent_id = agent_id
    # Under the workspace's lock, like every append: an ``agent.offline`` of the socket it
    # replaces, sequenced after this, reads the new session here and is refused.
    await (
        Agent.filter(id=agent_id, workspace_id=event.workspace_id)
        .using_db(connection)
        .update(session_id=session_id)
    )


@handlers.on("agent.revoked")
async def _revoked(event: Event, connection: Connection) -> None:
    agent = await _locked_agent(event, connection)
    if agent.status == AgentStatus.REVOKED:
        raise Conflict(f"Agent {agent.id} is revoked already.", code="already_revoked")
    agent.status = AgentStatus.REVOKED
    agent.revoked_at = event.recorded_at
    await agent.save(using_db=connection, update_fields=["status", "revoked_at"])
    bulk_inserts.forget(_actor_may_write(agent.id))  # its later events in this batch


def pairing_code_expired() -> Gone:
    return Gone(
        "This pairing code has expired.",
        code="pairing_code_expired",
        hint="Codes are short-lived (10 minutes by default): create a new one on the Agents "
        "page or with `lineup pair --workspace WORKSPACE_ID`, then pair again.",
    )


def pairing_code_used() -> Gone:
    return Gone(
        "This pairing code was used already.",
        code="pairing_code_used",
        hint="Each code works once. If this agent paired already, connect with its "
        "credential; otherwise create a new code and pair again.",
    )
