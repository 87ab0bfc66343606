"""The audit trail: who decided, withdrew, paired, confirmed, revoked or cancelled what, who
signed in or out (or failed to) and created or revoked a token, who joined which workspace
with which role, and when.

It is a view of the event log, not a second store: the log already holds each of these
facts once, with its actor, the hub's time and its sequence, and is never rewritten — so
the trail cannot disagree with what happened. An entry names the decision (the option
chosen, and the hash of the exact action it approved), never the text a person typed into
an input card (spec §11: sensitive input is not repeated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.core.people.account_events import ACCOUNT_EVENT_TYPES
from hub.core.store.models import Event
from hub.core.store.paging import Order, page

AUDITED_TYPES = (
    "interaction.resolved",
    "interaction.voted",
    "interaction.reminded",
    "interaction.escalated",
    "interaction.expired",
    "interaction.withdrawn",
    "agent.paired",
    "agent.remote_added",
    "agent.confirmed",
    "agent.revoked",
    "task.cancel_requested",
    *ACCOUNT_EVENT_TYPES,
    "member.invited",
    "member.joined",
    "member.role_changed",
    "member.removed",
    "member.invitation_revoked",
)
AUDIT_ORDER = Order("audit", ("sequence",), descending=False)

_SUBJECT_KEYS = (
    "interactionId",
    "agentId",
    "name",
    "via",
    "respondedBy",
    "reason",
    "to",  # a policy's reminder: who was reminded
    "escalateTo",
    "batchId",
    "invitationId",
    "userId",
    "role",
    "previousRole",
    "email",
    "sentBy",
)
_ACCOUNT_KEYS = ("userId", "outcome", "address", "tokenId")


def audit_entry(event: Event) -> dict[str, Any]:
    payload = event.payload or {}
    entry: dict[str, Any] = {
        "sequence": int(event.sequence),
        "type": event.type,
        "actor": event.actor,
        "at": event.recorded_at.isoformat(),
        "taskId": event.task_id,
    }
    entry.update({key: payload[key] for key in _SUBJECT_KEYS + _ACCOUNT_KEYS if key in payload})
    response = payload.get("response")
    if isinstance(response, dict):
        chosen = {k: response[k] for k in ("optionId", "optionIds") if k in response}
        entry["decision"] = chosen or {"answered": True}
        # The exact action decided on, and the one proposed when the person edited it.
        entry.update(
            {k: response[k] for k in ("actionHash", "editedFrom", "action") if k in response}
        )
        if isinstance(response.get("votes"), list):
            entry["votes"] = [
                {k: v for k, v in vote.items() if k in ("actor", "optionId", "via", "at")}
                for vote in response["votes"]
            ]
    return entry


async def audit_trail(workspace_id: str, after: int, limit: int) -> list[dict[str, Any]]:
    """The workspace's audited events after sequence ``after``, oldest first."""
    return (await audit_page(workspace_id, after=after, limit=limit)).entries


@dataclass(frozen=True)
class AuditPage:
    entries: list[dict[str, Any]]
    next_cursor: str | None


async def audit_page(
    workspace_id: str, *, limit: int, after: int = 0, cursor: str | None = None
) -> AuditPage:
    """A page of the audit trail in log order, after sequence ``after`` or after ``cursor``.

    The trail keeps the log's order, unlike the lists a person reads newest first: it is
    read from its start and followed as it grows, as the event log is (``after`` is the
    sequence that log pages by), and a program auditing a workspace must see every entry
    in the order it happened."""
    query = Event.filter(workspace_id=workspace_id, sequence__gt=after, type__in=AUDITED_TYPES)
    found = await page(query, AUDIT_ORDER, limit=limit, cursor=cursor)
    return AuditPage([audit_entry(event) for event in found.items], found.next_cursor)
