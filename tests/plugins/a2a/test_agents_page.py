"""The agents page: add a remote agent by address, see its card, give the key it asks for.

Forms are posted as the page sends them (session cookie and CSRF token) to a hub whose
connector fetches cards from real a2a-sdk servers on loopback.
"""

from __future__ import annotations

import re
from typing import Any

from hub.core.ids import new_id
from hub.core.store.models import Event, Membership, Role, User
from hub.core.store.remote_models import RemoteAgent
from hub.testing import free_port
from tests.plugins.a2a.conftest import Hubs, Person, sign_up
from tests.plugins.a2a.peers import Instant, serve_remote, v03_card
from tests.plugins.a2a.test_tasks import ended

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
KEY = "sk-remote-" + "k" * 40


async def post_form(person: Person, path: str, form: dict[str, str]) -> tuple[int, str, str]:
    """Post ``form`` from the page at ``/w/{ws}/agents``; the status, body and redirect."""
    page = f"/w/{person.workspace_id}/agents"
    html = await (await person.browser.get(page)).get_data(as_text=True)
    match = _CSRF.search(html)
    assert match, "no CSRF token on the agents page"
    response = await person.browser.post(
        f"/w/{person.workspace_id}{path}", form={**form, "csrf_token": match.group(1)}
    )
    return (
        response.status_code,
        await response.get_data(as_text=True),
        response.headers.get("Location", ""),
    )


async def page(person: Person, path: str) -> str:
    response = await person.browser.get(f"/w/{person.workspace_id}{path}")
    assert response.status_code == 200
    return await response.get_data(as_text=True)


async def test_adding_by_address_shows_the_card(person: Person) -> None:
    async with serve_remote(Instant(), streaming=True) as remote:
        status, _, location = await post_form(person, "/agents/remote", {"url": remote.url})
        assert status == 302, location
        agent_page = await page(person, location.split(person.workspace_id, 1)[1])
    _, listed = await person.get("/remote-agents")
    [agent] = listed["agents"]
    assert location.endswith(f"/agents/{agent['id']}")
    assert "Painter is added" in agent_page
    assert "A test agent." in agent_page and "1.2.3" in agent_page
    assert "Paint buttons" in agent_page and "Paints." in agent_page
    assert 'data-streaming="yes"' in agent_page
    assert 'id="remote-secret"' not in agent_page  # its card asks for no key
    index = await page(person, "/agents")
    assert "A test agent." in index and "Streams progress:" in index


async def test_a_card_that_asks_for_a_key_gets_it_once_and_sends_it(person: Person) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = v03_card(url, name="Locked", streaming=False, extra={})
    card["securitySchemes"] = {"token": {"type": "http", "scheme": "bearer"}}
    card["security"] = [{"token": []}]
    async with serve_remote(Instant(), card=card, port=port) as remote:
        status, _, location = await post_form(person, "/agents/remote", {"url": remote.url})
        assert status == 302
        path = location.split(person.workspace_id, 1)[1]
        agent_page = await page(person, path)
        assert 'data-key-state="missing"' in agent_page and "bearer token" in agent_page

        status, _, back = await post_form(person, f"{path}/key", {"secret": KEY})
        assert status == 302 and back.endswith(path)
        agent_page = await page(person, path)
        assert 'data-key-state="stored"' in agent_page and "never shown" in agent_page
        assert KEY not in agent_page

        agent_id = path.rsplit("/", 1)[1]
        task_id = await person.task_for(agent_id)
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded"
    calls = [r for r in remote.requests if r["path"] == "/a2a"]
    assert calls and all(r["headers"].get("authorization") == f"Bearer {KEY}" for r in calls)
    stored = await RemoteAgent.get(id=agent_id)
    assert stored.secret_sealed and KEY not in stored.secret_sealed
    logged = await Event.filter(workspace_id=person.workspace_id).values_list("payload", flat=True)
    assert all(KEY not in str(payload) for payload in logged)


async def test_a_bad_key_is_refused_and_changes_nothing(person: Person) -> None:
    port = free_port()
    card = v03_card(f"http://127.0.0.1:{port}", name="Locked", streaming=False, extra={})
    card["securitySchemes"] = {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}
    async with serve_remote(Instant(), card=card, port=port) as remote:
        _, _, location = await post_form(person, "/agents/remote", {"url": remote.url})
    path = location.split(person.workspace_id, 1)[1]
    assert "X-Api-Key" in await page(person, path)
    status, _, _ = await post_form(person, f"{path}/key", {"secret": "two\nlines"})
    assert status == 302
    agent_page = await page(person, path)
    assert "invalid_remote_secret" in agent_page and 'data-key-state="missing"' in agent_page
    assert (await RemoteAgent.get(id=path.rsplit("/", 1)[1])).secret_sealed is None


async def expect_refusal(person: Person, url: str, code: str, status: int) -> str:
    answered, html, _ = await post_form(person, "/agents/remote", {"url": url})
    assert answered == status, html
    assert f"<code>{code}</code>" in html and 'role="alert"' in html
    assert f'value="{url}"' in html  # the address stays typed, to correct it
    _, listed = await person.get("/remote-agents")
    assert listed["agents"] == []  # nothing added
    return html


async def test_an_address_where_nothing_answers_is_unreachable(person: Person) -> None:
    html = await expect_refusal(
        person, f"http://127.0.0.1:{free_port()}", "remote_unreachable", 502
    )
    assert "cannot be reached" in html


async def test_an_address_without_a_card_is_refused(person: Person) -> None:
    async with serve_remote(Instant(), card={"name": ["not", "a", "string"]}) as remote:
        await expect_refusal(person, remote.url, "invalid_agent_card", 422)
    await expect_refusal(person, "ftp://agent.example", "outbound_address_refused", 422)


async def test_a_private_address_is_refused_unless_the_operator_allows_it(hubs: Hubs) -> None:
    person = await sign_up(await hubs.start(outbound_allow_private=False))
    async with serve_remote(Instant()) as remote:
        html = await expect_refusal(person, remote.url, "outbound_address_refused", 422)
    assert "LINEUP_OUTBOUND_ALLOW_PRIVATE" in html
    assert remote.requests == []  # refused before any request left


async def test_a_hostile_card_is_shown_as_bounded_text(person: Person) -> None:
    hostile = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    port = free_port()
    card: dict[str, Any] = v03_card(
        f"http://127.0.0.1:{port}",
        name=hostile,
        streaming="yes",
        extra={},  # type: ignore[arg-type]
    )
    card["description"] = hostile + "D" * 100_000
    card["version"] = {"major": 1}
    card["skills"] = [{"id": "s", "name": hostile, "tags": "not a list"}, 42] * 50
    card["documentationUrl"] = "javascript:alert(1)"
    async with serve_remote(Instant(), card=card, port=port) as remote:
        status, _, location = await post_form(person, "/agents/remote", {"url": remote.url})
    assert status == 302
    for path in ("/agents", location.split(person.workspace_id, 1)[1]):
        html = await page(person, path)
        assert "<script>" not in html and "<img src=x" not in html
        assert "&lt;script&gt;" in html
        assert "javascript:" not in html
        assert len(html) < 60_000  # capped, not 100 000 characters of description
    assert 'data-streaming="no"' in html  # "yes" is not true


async def test_a_viewer_of_the_workspace_cannot_add_agents_or_keys(
    hub: Any, person: Person
) -> None:
    viewer = await sign_up(hub, "viewer")
    user_id = (await Membership.get(workspace_id=viewer.workspace_id)).user_id
    await Membership.create(
        id=new_id("membership"),
        workspace_id=person.workspace_id,
        user=await User.get(id=user_id),
        role=Role.VIEWER,
    )
    viewer.workspace_id = person.workspace_id  # looking at the other person's workspace
    async with serve_remote(Instant()) as remote:
        status, html, _ = await post_form(viewer, "/agents/remote", {"url": remote.url})
    assert status == 403 and "read_only_member" in html
    _, listed = await person.get("/remote-agents")
    assert listed["agents"] == []
