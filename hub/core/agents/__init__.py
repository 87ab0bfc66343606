"""The agents of a workspace: pairing, credentials and confirmation, their lifecycle rows,
presence (heartbeats, lost connections), and remote (A2A) agents and their calls.
"""

from __future__ import annotations

from hub.core.agents.lifecycle import credential_revoked
from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.presence import PresenceSweeper, connection_lost, record_heartbeat
from hub.core.agents.registry import (
    PAIRING_ATTEMPTS,
    agent_for_credential,
    agent_view,
    confirm_agent,
    get_agent,
    list_agents,
    public_status,
    redeem_pairing_code,
    revoke_agent,
)
from hub.core.agents.remote import (
    REMOTE_AGENTS_EXTENSION,
    UNREACHABLE,
    RemoteAgentAdder,
    RemoteCard,
    add_remote_agent,
    list_remote_agents,
    note_contact,
    remote_agent_view,
    remote_call_view,
    remote_of,
    remote_secret,
    store_remote_secret,
)
from hub.core.agents.remote_calls import (
    claim_call,
    claimable_calls,
    holds,
    process_owner_name,
    release_calls,
    release_every_call,
    renew_leases,
)

__all__ = [
    "PAIRING_ATTEMPTS",
    "REMOTE_AGENTS_EXTENSION",
    "UNREACHABLE",
    "PresenceSweeper",
    "RemoteAgentAdder",
    "RemoteCard",
    "add_remote_agent",
    "agent_for_credential",
    "agent_view",
    "claim_call",
    "claimable_calls",
    "confirm_agent",
    "connection_lost",
    "create_pairing_code",
    "credential_revoked",
    "get_agent",
    "holds",
    "list_agents",
    "list_remote_agents",
    "note_contact",
    "process_owner_name",
    "public_status",
    "record_heartbeat",
    "redeem_pairing_code",
    "release_calls",
    "release_every_call",
    "remote_agent_view",
    "remote_call_view",
    "remote_of",
    "remote_secret",
    "renew_leases",
    "revoke_agent",
    "store_remote_secret",
]
