"""Agents: pairing with a one-time code, credentials, confirmation, revocation (spec §7.1).

An agent pairs by redeeming a code its owner created; it gets a credential (shown once,
stored as a hash) and is ``pending`` until the owner confirms its name. Revoking ends the
credential for good. Each of these changes is an event (``agent.paired``,
``agent.confirmed``, ``agent.revoked``) whose handler in ``hub.core.agents.lifecycle`` changes
the agent's row in the same transaction; presence (``agent.online`` / ``agent.offline``) is
``hub.core.agents.presence``.

Failed pairing attempts are counted per source address and overall; past the caps every
attempt is refused with ``pairing_rate_limited`` before the code is even looked up, so a
code cannot be found by guessing.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterable
from datetime import UTC, datetime
from typing import Any

from tortoise.expressions import Q
from tortoise.functions import Count

from hub.core.agents.lifecycle import (
    credential_revoked,
    pairing_code_expired,
    pairing_code_used,
)
from hub.core.agents.presence import connection_lost, iso
from hub.core.errors import Conflict, Gone, InvalidInput, NotFound, Unauthorized
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.log.group_commit import GroupCommit, Request
from hub.core.people.credentials import hash_pairing_code, hash_token, new_token
from hub.core.people.ratelimit import FailureLimiter
from hub.core.store.models import Agent, AgentStatus, PairingCode
from hub.core.store.paging import Order, Page, page

AGENT_CREDENTIAL_PREFIX = "lu_agt"
MAX_NAME_LENGTH = 200
MAX_LABEL_LENGTH = 100  # runtime, version, each capability
MAX_CAPABILITIES = 100
AGENT_ORDER = Order("agents", ("created_at",))

PAIRING_ATTEMPTS = FailureLimiter(
    per_source=10,
    overall=200,
    window_s=60.0,
    code="pairing_rate_limited",
    what="pairing attempts",
)
"""Failed redemptions allowed per minute: 10 from one address, 200 from everyone."""


async def redeem_pairing_code(
    code: str,
    *,
    name: str,
    runtime: str,
    version: str,
    capabilities: list[str],
    secret_key: str,
    source: str | None = None,
) -> tuple[Agent, str]:
    """Pair a new agent with a one-time code.

    Returns the agent (``pending`` until its owner confirms the name) and its credential,
    which is shown this once: only its hash is kept. ``source`` is the caller's address,
    for the per-address cap on failed attempts. Raises ``Unauthorized``
    (``pairing_code_unknown``), ``Gone`` (``pairing_code_expired``, ``pairing_code_used``),
    ``RateLimited`` (``pairing_rate_limited``) or ``InvalidInput``.
    """
    name = clean_agent_name(name)
    runtime, version = _label(runtime, "runtime"), _label(version, "version")
    capabilities = _capabilities(capabilities)
    PAIRING_ATTEMPTS.check(source)
    try:
        row = await PairingCode.filter(code_hash=hash_pairing_code(code, secret_key)).first()
        if row is None:
            raise Unauthorized(
                "No pairing code matches this one.",
                code="pairing_code_unknown",
                hint="Copy the code again (8 characters, like 7KQ2-M9XD) from the Agents page, "
                "or create a new one with `lineup pair --workspace WORKSPACE_ID`.",
            )
        if row.used_at is not None:
            raise pairing_code_used()
        if row.expires_at <= datetime.now(UTC):
            raise pairing_code_expired()
        agent_id = new_id("agent")
        await append_event(
            row.workspace_id,
            "agent.paired",
            {
                "agentId": agent_id,
                "name": name,
                "runtime": runtime,
                "version": version,
                "capabilities": capabilities,
                "pairingCodeId": row.id,
            },
            actor=f"agent:{agent_id}",
        )
    except (Unauthorized, Gone):
        PAIRING_ATTEMPTS.record_failure(source)
        raise
    credential = new_token(AGENT_CREDENTIAL_PREFIX)
    await Agent.filter(id=agent_id).update(credential_hash=hash_token(credential))
    return await Agent.get(id=agent_id), credential


async def _agents_by_credential(_key: Hashable, batch: list[Request[str]]) -> None:
    hashes = {request.work for request in batch}
    found = {a.credential_hash: a for a in await Agent.filter(credential_hash__in=hashes)}
    for request in batch:
        agent = found.get(request.work)
        request.settle(copy.copy(agent) if agent is not None else None)


# Sockets opened at once (a fleet back after a network blip) look their agents up in one
# query, not one each.
_CREDENTIAL_LOOKUPS: GroupCommit[str] = GroupCommit(_agents_by_credential, max_batch=500)


async def agent_for_credential(credential: str) -> Agent:
    """The agent a credential belongs to; ``Unauthorized`` if it is unknown or revoked."""
    agent: Agent | None = await _CREDENTIAL_LOOKUPS.submit(None, hash_token(credential))
    if agent is None:
        raise Unauthorized(
            "This agent credential is unknown.",
            code="invalid_credential",
            hint="Check the credential the adapter stored, or pair the agent again with a "
            "new code.",
        )
    if agent.status == AgentStatus.REVOKED or agent.revoked_at is not None:
        raise credential_revoked(agent)
    return agent


async def list_agents(workspace_id: str) -> list[Agent]:
    return await Agent.filter(workspace_id=workspace_id).order_by("created_at", "id")


async def agents_by_id(workspace_id: str, ids: Iterable[str | None]) -> dict[str, Agent]:
    """The workspace's agents among ``ids`` (``None`` skipped), by id: the ones a page or a
    list names, not every agent (a workspace of two thousand would read them all each time)."""
    wanted = sorted({i for i in ids if i})
    if not wanted:
        return {}
    return {a.id: a for a in await Agent.filter(workspace_id=workspace_id, id__in=wanted)}


async def agents_page(workspace_id: str, *, limit: int, cursor: str | None = None) -> Page[Agent]:
    """A page of the workspace's agents, the newest paired first: the one a person just
    paired is the one they look for."""
    query = Agent.filter(workspace_id=workspace_id)
    return await page(query, AGENT_ORDER, limit=limit, cursor=cursor)


async def get_agent(workspace_id: str, agent_id: str) -> Agent:
    agent = await Agent.filter(id=agent_id, workspace_id=workspace_id).first()
    if agent is None:
        raise NotFound(
            f"Agent {agent_id} does not exist in this workspace.",
            code="agent_not_found",
            hint="List the workspace's agents and use one of their ids.",
        )
    return agent


async def confirm_agent(workspace_id: str, agent_id: str, name: str, *, by: str) -> Agent:
    """Finish binding: the owner confirms (or changes) the agent's name.

    Confirming again with another name renames the agent; with the same name it changes
    nothing. ``by`` is the actor (``user:usr_…``; a bare user id is read as that user).
    """
    agent = await get_agent(workspace_id, agent_id)
    name = clean_agent_name(name)
    if agent.status == AgentStatus.REVOKED:
        raise Conflict(
            f"Agent {agent.name} ({agent.id}) was revoked; it cannot be confirmed.",
            code="agent_revoked",
            hint="Pair the agent again with a new code, then confirm the new one.",
        )
    if agent.confirmed_at is not None and agent.name == name:
        return agent
    await append_event(
        workspace_id,
        "agent.confirmed",
        {"agentId": agent.id, "name": name, "previousName": agent.name},
        actor=_actor(by),
    )
    return await get_agent(workspace_id, agent_id)


async def revoke_agent(workspace_id: str, agent_id: str, *, by: str) -> Agent:
    """Revoke the agent's credential for good; its live socket closes within a second.

    The gateway closes the socket when it sees ``agent.revoked`` on the bus (and, in
    another hub process, at the agent's next heartbeat at the latest). Revoking a revoked
    agent changes nothing.
    """
    agent = await get_agent(workspace_id, agent_id)
    if agent.status != AgentStatus.REVOKED:
        try:
            await append_event(
                workspace_id,
                "agent.revoked",
                {"agentId": agent.id, "name": agent.name},
                actor=_actor(by),
            )
        except Conflict as error:
            if error.code != "already_revoked":  # lost a race to another revoke: same end
                raise
    return await get_agent(workspace_id, agent_id)


def public_status(agent: Agent) -> str:
    """``revoked``, ``pending`` (name not confirmed yet), ``online`` or ``offline``."""
    if agent.status == AgentStatus.REVOKED:
        return "revoked"
    if agent.confirmed_at is None:
        return "pending"
    return "online" if agent.status == AgentStatus.ONLINE else "offline"


async def presence_counts(workspace_id: str) -> tuple[int, int]:
    """How many of the workspace's agents are online, and how many it has (revoked ones
    aside), by ``public_status``: what every page's frame shows, counted by the database
    rather than read agent by agent."""
    connected = Q(status=AgentStatus.ONLINE, confirmed_at__isnull=False)
    row = await (
        Agent.filter(workspace_id=workspace_id)
        .exclude(status=AgentStatus.REVOKED)
        .annotate(online=Count("id", _filter=connected), total=Count("id"))
        .first()
        .values("online", "total")
    )
    return (int(row["online"] or 0), int(row["total"] or 0)) if row else (0, 0)


def agent_view(agent: Agent) -> dict[str, Any]:
    """The agent as the JSON API shows it.

    ``status`` is the one word to show; ``connected`` tells whether a socket is live even
    while the agent is still ``pending``; ``connectionLost`` is set while the agent is
    offline, with its last heartbeat (running tasks show it, they are not failed yet).
    """
    return {
        "id": agent.id,
        "workspaceId": agent.workspace_id,
        "name": agent.name,
        "runtime": agent.runtime,
        "version": agent.version,
        "status": public_status(agent),
        "connected": agent.status == AgentStatus.ONLINE,
        "lastHeartbeatAt": iso(agent.last_heartbeat_at),
        "capabilities": list(agent.capabilities or []),
        "createdAt": iso(agent.created_at),
        "confirmedAt": iso(agent.confirmed_at),
        "revokedAt": iso(agent.revoked_at),
        "connectionLost": connection_lost(agent),
    }


def clean_agent_name(name: Any) -> str:
    cleaned = name.strip() if isinstance(name, str) else ""
    if not 1 <= len(cleaned) <= MAX_NAME_LENGTH:
        raise InvalidInput(
            f"An agent's name must be 1 to {MAX_NAME_LENGTH} characters.",
            code="invalid_agent_name",
            hint="Pick a short name people will recognise, like 'build-bot on laptop'.",
        )
    return cleaned


def _label(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_LABEL_LENGTH:
        raise InvalidInput(f"'{field}' must be text of at most {MAX_LABEL_LENGTH} characters.")
    return value.strip()


def _capabilities(values: Any) -> list[str]:
    if values is None:
        return []
    if (
        not isinstance(values, list)
        or len(values) > MAX_CAPABILITIES
        or not all(isinstance(v, str) and len(v) <= MAX_LABEL_LENGTH for v in values)
    ):
        raise InvalidInput(
            f"'capabilities' must be a list of at most {MAX_CAPABILITIES} names of at most "
            f"{MAX_LABEL_LENGTH} characters."
        )
    return list(dict.fromkeys(values))  # drop repeats, keep the order given


def _actor(by: str) -> str:
    return by if ":" in by or by == "system" else f"user:{by}"


__all__ = [
    "AGENT_CREDENTIAL_PREFIX",
    "PAIRING_ATTEMPTS",
    "agent_for_credential",
    "agent_view",
    "agents_by_id",
    "agents_page",
    "clean_agent_name",
    "confirm_agent",
    "get_agent",
    "list_agents",
    "presence_counts",
    "public_status",
    "redeem_pairing_code",
    "revoke_agent",
]
