"""The workspace a page is about, and what the page's frame shows of it.

Every page below ``/w/<workspace_id>/`` checks membership first (another workspace's id
answers "not found", as the API does). The frame — sidebar, top bar — shows how many cards
wait (the inbox's first count alone: a page is not charged for the others) and how many
agents are online on every page, including on a phone where the
sidebar is folded away (spec §8.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.core.agents.registry import presence_counts
from hub.core.approvals.permissions import ANSWERING_ROLES
from hub.core.errors import Forbidden
from hub.core.log.events import current_workspace
from hub.core.notify.preferences import EVENTS, settings_for, wanted
from hub.core.people.accounts import require_membership, workspaces_of
from hub.core.store.models import Membership, Role, User, Workspace
from hub.core.work.inbox import reader_of, waiting_count
from hub.protocol.interactions import Risk


@dataclass(frozen=True, slots=True)
class Frame:
    workspace: Workspace
    waiting: int  # cards waiting for this person
    agents_online: int
    agents_total: int
    sequence: int
    notify: list[str]
    role: Role

    @property
    def may_answer(self) -> bool:
        """Owners and members answer and act; viewers only look (the server refuses them
        too: this only spares them buttons that would not work)."""
        return self.role in ANSWERING_ROLES

    def context(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "role": self.role.value,
            "may_answer": self.may_answer,
            "waiting": self.waiting,
            "agents_online": self.agents_online,
            "agents_total": self.agents_total,
            "sequence": self.sequence,
            "notify": self.notify,
        }


async def workspace_of(user: User, workspace_id: str) -> Workspace:
    membership = await require_membership(user, workspace_id)
    return await Workspace.get(id=membership.workspace_id)


async def home_workspace(user: User) -> Workspace | None:
    workspaces = await workspaces_of(user)
    return workspaces[0] if workspaces else None


async def browser_notifications(user_id: str) -> list[str]:
    """What this browser may tell the person right now, for ``body[data-notify]``: an event
    ("waiting", "failed") for news of any risk, "waiting:high" when only a high-risk card
    would be shown (they want high risk only, or their quiet hours let it through)."""
    settings = await settings_for(user_id)
    shown = []
    for event in EVENTS:
        if wanted(settings, "web", event):
            shown.append(event)
        elif event == "waiting" and wanted(settings, "web", event, Risk.HIGH):
            shown.append(f"{event}:high")
    return shown


async def frame_for(
    user: User,
    workspace_id: str,
    *,
    acting: bool = False,
    membership: Membership | None = None,
) -> Frame:
    """The page's frame; ``acting``: the page changes something, which viewers may not.
    ``membership``: the user's in this workspace, when the page has read it already."""
    if membership is None:
        membership = await require_membership(user, workspace_id)
    if acting and membership.role not in ANSWERING_ROLES:
        raise Forbidden(
            "Viewers of a workspace can look but not act.",
            code="read_only_member",
            hint="Ask an owner of the workspace to make you a member.",
        )
    # Read before what the page shows: live updates start after its sequence, so nothing
    # between is missed.
    workspace = await current_workspace(membership.workspace_id)
    sequence = int(workspace.last_sequence)
    waiting = await waiting_count(workspace.id, reader_of(membership))
    online, total = await presence_counts(workspace.id)
    return Frame(
        workspace=workspace,
        waiting=waiting,
        agents_online=online,
        agents_total=total,
        sequence=sequence,
        notify=await browser_notifications(user.id),
        role=Role(membership.role),
    )
