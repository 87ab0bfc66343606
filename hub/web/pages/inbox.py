"""The inbox (spec §6) as a list and a detail: waiting for me, failed or needs attention,
recently done, as compact rows; the card a row stands for beside the list on a wide screen,
as its own view on a narrow one.

The page is one address, ``/w/<ws>/inbox``, its state in the query: ``card`` (the card
shown in the detail; without it, the oldest card waiting), ``agent`` and ``risk`` (the
filters). A page a person reloads or sends on shows what they were looking at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from quart import Blueprint, request, url_for

from hub.core.errors import NotFound
from hub.core.people.accounts import require_membership
from hub.core.store.models import Agent, AgentStatus
from hub.core.store.paging import BadCursor
from hub.core.work.inbox import SECTIONS, read_inbox, reader_of
from hub.core.work.inbox_counts import agents_asking
from hub.core.work.interactions import get_interaction
from hub.host.templates import render_template
from hub.protocol.interactions import Risk
from hub.web.pages.cards import CardView
from hub.web.pages.interactions import card_views
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("inbox", __name__)
# Rows per section: three sections of 25 fill a screen or two of compact rows; "Show
# more" pages a section on (the API's first pages hold 50).
SECTION_PAGE = 25


@dataclass(frozen=True, slots=True)
class InboxFilters:
    """What the person narrowed the inbox to; a value the page does not know is dropped
    (a page, unlike the API, has nobody to tell: it shows everything instead)."""

    workspace_id: str
    agent: str | None = None
    risk: Risk | None = None
    # "Show more" of one section: that section alone, its page after the cursor.
    section: str | None = None
    cursor: str | None = None

    @classmethod
    def from_args(cls, workspace_id: str, args: Any, agent_ids: set[str]) -> InboxFilters:
        agent = args.get("agent") or None
        try:
            risk = Risk(args["risk"]) if args.get("risk") else None
        except ValueError:
            risk = None
        section = args.get("section") if args.get("section") in SECTIONS else None
        cursor = (args.get("cursor") or None) if section else None
        return cls(workspace_id, agent if agent in agent_ids else None, risk, section, cursor)

    def more(self, section: str, cursor: str) -> str:
        return replace(self, section=section, cursor=cursor).url()

    def whole(self) -> str:
        return replace(self, section=None, cursor=None).url()

    @property
    def active(self) -> bool:
        return bool(self.agent or self.risk)

    def url(self, card: str | None = None) -> str:
        query = {
            "agent": self.agent,
            "risk": self.risk.value if self.risk else None,
            "section": self.section,
            "cursor": self.cursor,
            "card": card,
        }
        return url_for(
            "pages.inbox.show",
            workspace_id=self.workspace_id,
            **{k: v for k, v in query.items() if v},
        )


@dataclass(frozen=True, slots=True)
class CardRow:
    """One waiting card as a row: the card itself, its task and agent as the inbox has them."""

    card: CardView
    task: dict[str, Any] | None
    agent: dict[str, Any] | None

    @property
    def agent_away(self) -> bool:
        return bool(self.agent and self.agent.get("status") == "offline")


@blueprint.get("/w/<workspace_id>/inbox")
@login_required
async def show(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    membership = await require_membership(user, workspace_id)
    workspace_id, reader = membership.workspace_id, reader_of(membership)
    # The frame first: the page follows the log after the frame's sequence, so a card
    # that comes while the inbox is read still reaches it. Its badge counts everything
    # waiting, whatever the list is narrowed to.
    frame = await frame_for(user, workspace_id, membership=membership)
    agents = await _filter_choices(workspace_id, request.args.get("agent") or None)
    filters = InboxFilters.from_args(workspace_id, request.args, {a.id for a in agents})
    try:
        box = await read_inbox(
            workspace_id,
            limit=SECTION_PAGE,
            agent_id=filters.agent,
            risk=filters.risk,
            section=filters.section,
            cursor=filters.cursor,
            reader=reader,
        )
    except BadCursor:  # a link cut short: the whole inbox, as hub.web.pages.paging says
        filters = replace(filters, section=None, cursor=None)
        box = await read_inbox(
            workspace_id,
            limit=SECTION_PAGE,
            agent_id=filters.agent,
            risk=filters.risk,
            reader=reader,
        )
    view = box.view()
    more = {filters.section: view["nextCursor"]} if filters.section else view["nextCursors"]
    views = await card_views(workspace_id, box.cards, tasks_read=box.tasks, agents_read=box.agents)
    rows = [
        CardRow(card=card, task=item["task"], agent=item["agent"])
        for card, item in zip(views, view.get("waitingForMe", []), strict=True)
    ]
    chosen_id = request.args.get("card") or None
    selected = await _selected(workspace_id, chosen_id, rows)
    return await render_template(
        "pages/inbox.html",
        **frame.context(),
        inbox=view,
        rows=rows,
        selected=selected,
        chosen=selected is not None and selected.id == chosen_id,
        filters=filters,
        more={name: filters.more(name, cursor) for name, cursor in more.items() if cursor},
        filter_agents=agents,
        next_url=filters.url(),
    )


async def _filter_choices(workspace_id: str, chosen: str | None) -> list[Agent]:
    """The agents the inbox may be narrowed to, by name: those with a card waiting, and the
    one chosen (whatever it has in the other sections). Not every agent: a workspace of two
    thousand would send two thousand names with every inbox, for the few that are asking."""
    ids = set(await agents_asking(workspace_id))
    ids |= {chosen} if chosen else set()
    agents = await Agent.filter(workspace_id=workspace_id, id__in=ids).exclude(
        status=AgentStatus.REVOKED
    )
    return sorted(agents, key=lambda a: (a.name.lower(), a.id))


async def _selected(workspace_id: str, chosen_id: str | None, rows: list[CardRow]) -> Any:
    """The card the detail shows: the one asked for, if it is this workspace's (a decided
    card too: it is shown read-only, saying who decided), else the oldest one waiting."""
    for row in rows:
        if row.card.id == chosen_id:
            return row.card
    if chosen_id:
        try:
            interaction = await get_interaction(workspace_id, chosen_id)
        except NotFound:
            interaction = None
        if interaction is not None:
            (card,) = await card_views(workspace_id, [interaction])
            return card
    return rows[0].card if rows else None
