"""Who did it, in words a person recognises: the workspace's people and agents by name.

Every page that shows an actor — a timeline line, who decided a card, a vote, the approvers
a policy names — asks this one place. An id is for machines: an actor nobody here knows any
more reads as "someone" or "an agent", never as ``user:usr_…``. Names are the people's and
agents' own text and stay plain text (the templates escape them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hub.core.approvals.policies import POLICY_ACTOR
from hub.core.store.models import Agent, Membership, User
from hub.web.pages.i18n import gettext as _

SYSTEM_ACTOR = "system"  # the hub's own steps (a task failed as unreachable, …)


@dataclass(frozen=True)
class Names:
    people: Mapping[str, str] = field(default_factory=dict)  # user id → display name
    agents: Mapping[str, str] = field(default_factory=dict)  # agent id → name

    def person(self, user_id: str | None, *, opening: bool = False) -> str:
        """``opening``: the name opens a sentence, so a stand-in for it is capitalised."""
        name = self.people.get(user_id or "")
        return name or (_("Someone") if opening else _("someone"))

    def agent(self, agent_id: str | None, *, opening: bool = False) -> str:
        name = self.agents.get(agent_id or "")
        return name or (_("An agent") if opening else _("an agent"))

    def actor(self, actor: str | None, *, opening: bool = False) -> str:
        """The name behind an actor string of the log (``user:…``, ``agent:…``, the hub's)."""
        kind, _sep, ident = (actor or "").partition(":")
        if kind == "user":
            return self.person(ident, opening=opening)
        if kind == "agent":
            return self.agent(ident, opening=opening)
        if actor == POLICY_ACTOR:
            return _("The approval policy") if opening else _("the approval policy")
        if actor == SYSTEM_ACTOR:
            return _("The hub") if opening else _("the hub")
        return _("Someone") if opening else _("someone")

    def people_list(self, user_ids: Iterable[str]) -> str:
        return ", ".join(self.person(u) for u in user_ids)


async def workspace_names(
    workspace_id: str,
    actors: Iterable[str] = (),
    *,
    agent_ids: Iterable[str] = (),
    agents_read: Mapping[str, Agent] | None = None,
) -> Names:
    """The members of the workspace, the people among ``actors`` who are not members any
    more (their answers stay in the log, and so does who gave them), and the agents among
    ``actors`` and ``agent_ids``: only those, as a fleet of thousands is not read to name
    the two a page shows. ``agents_read``: agents the page already has, not read again."""
    actors = list(actors)
    members = await Membership.filter(workspace_id=workspace_id).values_list("user_id", flat=True)
    user_ids = {str(u) for u in members}
    user_ids |= {a.partition(":")[2] for a in actors if a.startswith("user:")}
    people = (
        await User.filter(id__in=list(user_ids)).values_list("id", "display_name")
        if user_ids
        else []
    )
    agents_read = agents_read or {}
    wanted = {str(a) for a in agent_ids if a}
    wanted |= {a.partition(":")[2] for a in actors if a.startswith("agent:")}
    unread = wanted - agents_read.keys()
    agents = {i: agents_read[i].name for i in wanted - unread}
    if unread:
        agents |= dict(
            await Agent.filter(workspace_id=workspace_id, id__in=list(unread)).values_list(
                "id", "name"
            )
        )
    return Names(
        people={str(i): str(n) for i, n in people},
        agents={str(i): str(n) for i, n in agents.items()},
    )
