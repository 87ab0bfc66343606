"""No page shows a template's insides: every page of a workspace with something on it,
rendered for its owner, holds no macro, undefined value or Python object in its text."""

from __future__ import annotations

import re

from quart import Quart

from tests.web.api.test_route_matrix import concrete, world

# What a template leaks when a name means something else than its author thought: a macro
# passed where a value belongs (``<Macro 'status'>``), an object without a view (``<...
# object at 0x…>``), a value Jinja could not find.
LEAKS = re.compile(r"&lt;Macro |<Macro |object at 0x|Undefined|jinja2\.")


async def test_no_page_shows_a_macro_an_object_or_an_undefined(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    ids = await world(ada)
    pages = [
        rule
        for rule in app.url_map.iter_rules()
        if not rule.websocket and "GET" in (rule.methods or ()) and rule.rule.startswith("/w/")
    ]
    assert len(pages) > 10  # the list really is the app's
    seen = 0
    for rule in pages:
        status, html = await ada.page(concrete(rule, ids))
        if status != 200:
            continue
        seen += 1
        leak = LEAKS.search(html)
        assert leak is None, (rule.rule, html[max(0, leak.start() - 200) : leak.end() + 100])
    assert seen > 10


async def test_an_address_nothing_answers_is_a_page_for_people_and_json_for_the_api(
    browser,
) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    status, html = await ada.page("/no/such/page", headers={"Accept": "text/html"})
    assert status == 404 and "There is nothing at this address." in html
    assert "<!doctype html>" in html.lower()
    api = await ada.client.get("/api/v1/no-such-thing", headers={"Accept": "text/html"})
    assert api.status_code == 404 and (await api.get_json())["error"]["code"] == "not_found"
    client = await ada.client.get("/no/such/page", headers={"Accept": "application/json"})
    assert (await client.get_json())["error"]["code"] == "not_found"
