"""Remote agents: agents reached over A2A that a person added by URL or pinned in configuration.

Only these ever appear in a workspace (seed 003): the hub lists what a person called or
pinned, never a registry's catalogue, so there is no "discover" here, only ``add``. Adding
logs ``agent.remote_added``; its handler (``hub.core.agents.lifecycle``) creates the ``Agent``
(runtime ``a2a``, confirmed by the act of adding it) and the ``RemoteAgent`` row with the
card. The remote's key is sealed with the hub's secret after that commits and never shown
again. Reachability reuses presence's events: ``agent.offline`` when calls start failing
("remote unreachable"), ``agent.online`` when one succeeds again.

The A2A protocol itself (fetching cards, sending tasks) lives in the connector plugin; the
core only keeps what it found, as the plugin hands it over: already inert, capped text.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from hub.core.agents.presence import iso
from hub.core.agents.registry import agent_view
from hub.core.errors import Conflict, InvalidInput, NotFound
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.people.sealing import seal, unseal
from hub.core.store.models import Agent, AgentStatus
from hub.core.store.remote_models import RemoteAgent, RemoteCall
from hub.protocol.clock import utcnow

RUNTIME = "a2a"
UNREACHABLE = "remote_unreachable"


@dataclass(frozen=True)
class RemoteCard:
    """What the connector read from an agent card, already reduced to inert text."""

    url: str
    endpoint_url: str
    protocol_version: str
    name: str
    version: str = ""
    streaming: bool = False
    auth_scheme: str = ""
    skills: list[str] = field(default_factory=list)
    card: dict[str, Any] = field(default_factory=dict)


# app.extensions[REMOTE_AGENTS_EXTENSION]: the RemoteAgentAdder, once a connector is on.
REMOTE_AGENTS_EXTENSION = "lineup.remote_agents"


class RemoteAgentAdder(Protocol):
    """What the JSON API calls to add a remote agent; the A2A connector provides it and
    registers itself under ``REMOTE_AGENTS_EXTENSION`` in the app's extensions."""

    async def add_remote_agent(
        self, workspace_id: str, url: str, *, pinned: bool, secret: str | None, by: str
    ) -> dict[str, Any]: ...


async def add_remote_agent(
    workspace_id: str,
    found: RemoteCard,
    *,
    by: str,
    pinned: bool = False,
    secret: str | None = None,
    secret_key: str,
) -> Agent:
    """Add the remote agent ``found`` describes, or return the one added from that URL.

    Adding a URL again changes nothing but what is given anew: ``pinned`` only ever turns
    on, and a new ``secret`` replaces the stored one.
    """
    existing = await RemoteAgent.filter(workspace_id=workspace_id, url=found.url).first()
    if existing is None:
        agent_id = new_id("agent")
        try:
            await append_event(
                workspace_id,
                "agent.remote_added",
                {
                    "agentId": agent_id,
                    "name": found.name,
                    "runtime": RUNTIME,
                    "version": found.version,
                    "capabilities": found.skills,
                    "remote": {
                        "url": found.url,
                        "endpointUrl": found.endpoint_url,
                        "protocolVersion": found.protocol_version,
                        "streaming": found.streaming,
                        "authScheme": found.auth_scheme,
                        "pinned": pinned,
                        "card": found.card,
                    },
                },
                actor=by,
            )
        except Conflict as error:
            if error.code != "remote_agent_exists":
                raise
        existing = await RemoteAgent.get(workspace_id=workspace_id, url=found.url)
    changes: dict[str, Any] = {}
    if pinned and not existing.pinned:
        changes["pinned"] = True
    if secret:
        changes["secret_sealed"] = seal(secret, secret_key)
    if changes:
        await RemoteAgent.filter(id=existing.id).update(**changes)
    return await Agent.get(id=existing.id)


async def remote_of(agent_id: str) -> RemoteAgent | None:
    return await RemoteAgent.filter(id=agent_id).first()


MAX_SECRET_LENGTH = 4000


async def store_remote_secret(
    workspace_id: str, agent_id: str, secret: str, *, secret_key: str
) -> RemoteAgent:
    """Keep the key the remote's card asks for, sealed; it replaces any key stored before.

    Nothing about it is logged, neither the key nor that it changed: the log is shown to
    every member and replayed to agents.
    """
    secret = secret.strip()
    if not secret or len(secret) > MAX_SECRET_LENGTH or any(c in secret for c in "\r\n"):
        raise InvalidInput(
            "The key is empty, spans several lines or is too long.",
            code="invalid_remote_secret",
            hint=f"Paste the key as the remote's operator gave it: one line, at most "
            f"{MAX_SECRET_LENGTH} characters.",
        )
    remote = await RemoteAgent.filter(id=agent_id, workspace_id=workspace_id).first()
    if remote is None:
        raise NotFound(
            f"No remote agent {agent_id} in this workspace.",
            code="remote_agent_not_found",
            hint="Add the agent by its address first.",
        )
    remote.secret_sealed = seal(secret, secret_key)
    await remote.save(update_fields=["secret_sealed"])
    return remote


def remote_secret(remote: RemoteAgent, secret_key: str) -> str | None:
    return unseal(remote.secret_sealed, secret_key) if remote.secret_sealed else None


async def list_remote_agents(workspace_id: str) -> list[tuple[Agent, RemoteAgent]]:
    remotes = {r.id: r for r in await RemoteAgent.filter(workspace_id=workspace_id)}
    agents = await Agent.filter(id__in=list(remotes)).order_by("created_at", "id")
    return [(agent, remotes[agent.id]) for agent in agents]


def remote_agent_view(agent: Agent, remote: RemoteAgent) -> dict[str, Any]:
    """The agent as ``agent_view`` shows it, plus its card and how it is reached.

    The key itself is never part of any view: only whether one is stored.
    """
    view = agent_view(agent)
    view["remote"] = {
        "url": remote.url,
        "protocolVersion": remote.protocol_version,
        "streaming": remote.streaming,
        "pinned": remote.pinned,
        "card": remote.card,
        "authentication": remote.auth_scheme or None,
        "hasSecret": remote.secret_sealed is not None,
        "reachable": remote.unreachable_since is None,
        "unreachableSince": iso(remote.unreachable_since),
        "lastContactAt": iso(remote.last_contact_at),
    }
    if remote.unreachable_since is not None:
        view["connectionLost"] = {
            "code": UNREACHABLE,
            "message": "Remote unreachable",
            "lastHeartbeatAt": iso(remote.last_contact_at),
        }
    return view


async def remote_call_view(task_id: str) -> dict[str, Any] | None:
    """How the remote agent last reported a task it carries, or ``None`` for a local task.

    ``state`` is the remote's own word (``working``, ``input-required``, …, or ``unknown``
    for any state the hub cannot place): a person sees it as such, beside the hub status.
    ``updates`` says how the hub learns of its changes (``stream``, ``push``, ``poll``, or
    polling because pushes stopped, ``poll-push-silent``, or were refused,
    ``poll-push-refused``; ``None`` before the remote took the task).
    """
    call = await RemoteCall.filter(id=task_id).first()
    if call is None:
        return None
    return {
        "state": call.last_state or None,
        "taskId": call.remote_task_id,
        "contextId": call.context_id,
        "lastContactAt": iso(call.last_contact_at),
        "updates": call.updates or None,
        "lastPushAt": iso(call.last_push_at),
    }


async def note_contact(agent_id: str, *, reachable: bool) -> None:
    """Record that a call to the remote worked (or failed); log the change of reachability."""
    remote = await RemoteAgent.filter(id=agent_id).first()
    agent = await Agent.filter(id=agent_id).first()
    if remote is None or agent is None:
        return
    now = utcnow()
    if reachable:
        await RemoteAgent.filter(id=agent_id).update(last_contact_at=now, unreachable_since=None)
        if agent.status == AgentStatus.OFFLINE:
            await _log_reachability(agent, "agent.online", {})
    elif remote.unreachable_since is None:
        await RemoteAgent.filter(id=agent_id, unreachable_since=None).update(unreachable_since=now)
        if agent.status == AgentStatus.ONLINE:
            await _log_reachability(
                agent,
                "agent.offline",
                {"reason": UNREACHABLE, "lastContactAt": iso(remote.last_contact_at)},
            )


async def _log_reachability(agent: Agent, event_type: str, extra: dict[str, Any]) -> None:
    # Conflict: another runner of the same remote logged it first.
    with contextlib.suppress(Conflict):
        await append_event(
            agent.workspace_id,
            event_type,
            {"agentId": agent.id, "name": agent.name, **extra},
            actor="system",
        )


__all__ = [
    "RUNTIME",
    "UNREACHABLE",
    "RemoteAgentAdder",
    "RemoteCard",
    "add_remote_agent",
    "list_remote_agents",
    "note_contact",
    "remote_agent_view",
    "remote_call_view",
    "remote_of",
    "remote_secret",
    "store_remote_secret",
]
