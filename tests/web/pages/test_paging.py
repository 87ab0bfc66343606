"""The pages page like the API: the inbox's sections show their first page and "Show more",
the agents and conversations lists "Older"; a cursor that no longer reads opens the first
page instead of an error."""

from __future__ import annotations

import html
import re

import pytest

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Workspace
from hub.core.work.conversations import create_conversation
from hub.web.pages.agents import PAGE_SIZE as AGENTS_PAGE
from hub.web.pages.conversations import PAGE_SIZE as CONVERSATIONS_PAGE
from hub.web.pages.inbox import SECTION_PAGE
from tests.core.scenario import make_agent
from tests.web.pages.world import build_world

pytestmark = pytest.mark.same_on_every_database


def link(page: str, marker: str) -> str:
    found = re.search(rf'<a href="([^"]+)"[^>]*{marker}', page)
    assert found, marker
    return html.unescape(found.group(1))


async def test_the_inbox_shows_more_of_a_section(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    titles = [f"Question {n:03}" for n in range(SECTION_PAGE + 3)]
    for title in titles:
        await append_event(
            ada.workspace_id,
            "interaction.requested",
            {"interaction": {"id": new_id("interaction"), "type": "approval", "title": title}},
            actor=f"agent:{world.agent.id}",
            task_id=world.task_id,
        )
    _, first = await ada.page(ada.w("/inbox"))
    assert titles[0] in first and titles[-1] not in first  # the oldest waiting first
    # The badges count every card, not the page.
    assert f'data-count="waitingForMe">{SECTION_PAGE + 3}</span>' in first
    assert f'<span class="count">{SECTION_PAGE + 3}</span>' in first
    more = link(first, 'data-show-more="waitingForMe"')
    _, second = await ada.page(more)
    assert titles[-1] in second and titles[0] not in second
    assert "data-whole-inbox" in second and 'data-show-more="waitingForMe"' not in second
    assert 'data-section="done"' not in second  # that section alone

    # A link cut short opens the whole inbox rather than an error.
    status, whole = await ada.page(more[:-6])
    assert status == 200 and titles[0] in whole and "data-whole-inbox" not in whole


async def test_agents_and_conversations_page_older(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    workspace = await Workspace.get(id=ada.workspace_id)
    first = await make_agent(workspace, "The first agent")
    for n in range(max(AGENTS_PAGE, CONVERSATIONS_PAGE)):
        await make_agent(workspace, f"Agent {n}")
    oldest = await create_conversation(
        ada.workspace_id, "The oldest talk", [first.id], by=f"user:{ada.user_id}"
    )
    for n in range(CONVERSATIONS_PAGE):
        await create_conversation(
            ada.workspace_id, f"Talk {n}", [first.id], by=f"user:{ada.user_id}"
        )

    for path, oldest_link in (
        ("/agents", f'/agents/{first.id}"'),
        ("/conversations", f'/conversations/{oldest.id}"'),
    ):
        _, page = await ada.page(ada.w(path))
        assert oldest_link not in page  # newest first: the oldest is on the next page
        _, older = await ada.page(link(page, "data-older"))
        assert oldest_link in older and "data-newest" in older
        # A cursor that no longer reads, or a parameter the page does not take: the list.
        status, again = await ada.page(ada.w(f"{path}?cursor=broken&offset=3"))
        assert status == 200 and "data-newest" not in again and "data-older" in again


async def test_the_inbox_filters_by_the_agents_asking_not_every_agent(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high",))
    workspace = await Workspace.get(id=ada.workspace_id)
    quiet = [await make_agent(workspace, f"Quiet {n}") for n in range(3)]
    _, page = await ada.page(ada.w("/inbox"))
    choices = re.search(r'<select id="filter-agent".*?</select>', page, re.S)
    assert choices and f'value="{world.agent.id}"' in choices.group(0)
    assert not any(agent.id in choices.group(0) for agent in quiet)
    # An agent with nothing waiting can still be chosen by its link, and is shown chosen.
    _, narrowed = await ada.page(ada.w(f"/inbox?agent={quiet[0].id}"))
    chosen = re.search(r'<select id="filter-agent".*?</select>', narrowed, re.S)
    assert chosen and f'<option value="{quiet[0].id}" selected>' in chosen.group(0)
