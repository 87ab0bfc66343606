"""The search page: the box in every page's header, results that link to their pages, the
words found marked in text that stays text, pages of results, and only one's own workspace."""

from __future__ import annotations

import re
from urllib.parse import quote

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Workspace
from tests.core.scenario import make_agent
from tests.web.pages.conftest import Browser


async def test_the_header_has_a_search_box_that_opens_the_search_page(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    status, html = await me.page(me.w("/inbox"))
    assert status == 200
    action = f'action="/w/{me.workspace_id}/search"'
    assert re.search(rf'<form class="topbar-search" role="search" method="get" {action}', html)
    assert 'name="q"' in html
    status, html = await me.page(me.w("/search"))
    assert status == 200 and "<h1>Search</h1>" in html and "Nothing found" not in html


async def test_results_link_to_their_pages_and_mark_the_words(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    workspace = await Workspace.get(id=me.workspace_id)
    agent = await make_agent(workspace, "Lamp lighter")
    task_id = new_id("task")
    await append_event(
        me.workspace_id,
        "task.created",
        {"taskId": task_id, "title": "Light the lamps", "targetAgentId": agent.id},
        actor=f"user:{me.user_id}",
    )
    status, html = await me.page(me.w("/search?q=lamp"))
    assert status == 200
    assert f'href="/w/{me.workspace_id}/agents/{agent.id}"' in html
    assert "<mark>Lamp</mark> lighter" in html and "Light the <mark>lamp</mark>s" in html
    assert f'href="/w/{me.workspace_id}/tasks/{task_id}"' in html


async def test_agent_markup_is_shown_as_text(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    workspace = await Workspace.get(id=me.workspace_id)
    await make_agent(workspace, '<script>alert("x")</script> sneaky')
    status, html = await me.page(me.w("/search?q=sneaky"))
    assert status == 200
    assert '<script>alert("x")</script>' not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; <mark>sneaky</mark>" in html
    status, html = await me.page(me.w("/search?q=" + quote("<script>")))
    assert status == 200 and "<script>alert" not in html
    assert "<mark>script</mark>" in html  # the word script, of the name, found as text


async def test_a_query_with_no_word_says_what_to_type(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    status, html = await me.page(me.w("/search?q=" + quote('"*-')))
    assert status == 400
    assert "bad_search_query" in html and "The search holds no word to look for." in html
    assert "Search for one to 8 words" in html


async def test_results_page_with_show_more(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    workspace = await Workspace.get(id=me.workspace_id)
    for n in range(35):
        await make_agent(workspace, f"Harbour pilot {n}")
    status, first = await me.page(me.w("/search?q=harbour"))
    assert status == 200 and first.count('data-kind="agent"') == 30
    more = re.search(r'<a href="([^"]+)" rel="next" data-older>Show more</a>', first)
    assert more, first
    status, second = await me.page(more.group(1).replace("&amp;", "&"))
    assert status == 200 and second.count('data-kind="agent"') == 5
    assert "Best matches" in second and 'rel="next"' not in second
    # A cursor cut short opens the first page, as every list's does.
    status, again = await me.page(me.w("/search?q=harbour&cursor=broken"))
    assert status == 200 and again.count('data-kind="agent"') == 30


async def test_another_workspace_is_not_searched(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    stranger: Browser = await browser("Eve")
    await make_agent(await Workspace.get(id=me.workspace_id), "Vault opener")
    status, html = await stranger.page(stranger.w("/search?q=vault"))
    assert status == 200 and "Vault" not in html and "Nothing found" in html
    status, html = await stranger.page(f"/w/{me.workspace_id}/search?q=vault")
    assert status in (403, 404) and "Vault" not in html


async def test_the_search_page_speaks_chinese(browser) -> None:  # type: ignore[no-untyped-def]
    me: Browser = await browser()
    zh = {"Accept-Language": "zh-CN,zh;q=0.9"}
    status, html = await me.page(me.w("/search?q=nothing"), headers=zh)
    assert status == 200 and "<h1>搜索</h1>" in html and "没有找到" in html
    status, html = await me.page(me.w("/search?q=" + quote("*")), headers=zh)
    assert status == 400 and "其中没有可以搜索的内容。" in html and "请搜索 1 到 8 个" in html
