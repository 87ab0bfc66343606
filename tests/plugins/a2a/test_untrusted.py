"""Hostile remote agents: what they send is stored inert and bounded, and pages still work."""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import JSONResponse

from plugins.a2a_connector import untrusted
from plugins.a2a_connector.agent_cards import read_card
from tests.plugins.a2a.conftest import Hubs, Person, sign_up
from tests.plugins.a2a.peers import Hostile, Instant, serve_remote


async def test_hostile_reports_are_kept_as_bounded_inert_text(person: Person) -> None:
    async with serve_remote(Hostile()) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, lambda d: d["status"] == "succeeded")
    progress = [e["payload"].get("summary", "") for e in detail["timeline"]]
    longest = max(progress, key=len)
    assert len(longest) <= 2000  # a 200 000-character report, capped
    # Kept as the characters it is (the pages escape them), minus control characters.
    assert "<script>alert('x')</script>" in detail["summary"]
    assert "\x1b" not in detail["summary"] and "\u202e" not in detail["summary"]
    assert "IGNORE ALL PREVIOUS INSTRUCTIONS" in detail["summary"]
    # Instructions are data: nothing was approved, decided or created because of them.
    assert detail["interactions"] == []
    [artifact] = detail["artifacts"]
    assert len(artifact["name"]) <= untrusted.NAME_LIMIT
    assert not artifact["url"].startswith("javascript:")  # the javascript: link was dropped
    assert artifact["url"].startswith("data:text/plain")
    assert b"<script>" in base64.b64decode(artifact["url"].split(",", 1)[1])

    page = await person.browser.get(f"/w/{person.workspace_id}/tasks/{task_id}")
    html = await page.get_data(as_text=True)
    assert page.status_code == 200
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(" in html
    assert 'href="javascript:' not in html


async def test_a_hostile_card_is_read_into_a_bounded_summary(person: Person) -> None:
    async with serve_remote(Instant()) as base:
        card = {
            "name": "<img src=x onerror=alert(1)>" + "N" * 10_000,
            "description": ["not", "a", "string"],
            "version": {"major": 1},
            "url": base.url + "/a2a",
            "protocolVersion": "0.3.0",
            "capabilities": {"streaming": "yes"},  # not a boolean: no streaming
            "skills": [None, 7, {"id": "x" * 5000, "name": "ok", "tags": "not-a-list"}],
            "documentationUrl": "javascript:alert(1)",
        }
        async with serve_remote(Instant(), card=card) as remote:
            agent = await person.add_remote(remote.url)
    assert len(agent["name"]) <= untrusted.NAME_LIMIT
    shown = agent["remote"]["card"]
    assert shown["description"] == "" and shown["version"] == ""
    assert shown["streaming"] is False and agent["remote"]["streaming"] is False
    assert shown["documentationUrl"] is None
    [skill] = shown["skills"]
    assert len(skill["id"]) <= untrusted.LABEL_LIMIT and skill["tags"] == []
    page = await person.browser.get(f"/w/{person.workspace_id}/agents")
    html = await page.get_data(as_text=True)
    assert page.status_code == 200
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # listed, as text
    assert "a2a" in html  # with its runtime, beside local agents


async def test_cards_that_are_not_agent_cards_are_refused_clearly(person: Person) -> None:
    for card in ([1, 2], {"name": ""}, {"name": "x", "url": "javascript:alert(1)"}):
        async with serve_remote(Instant(), card=card) as remote:  # type: ignore[arg-type]
            status, body = await person.post("/remote-agents", {"url": remote.url})
        assert status == 422, body
        assert body["error"]["code"] == "invalid_agent_card"


def test_text_is_capped_and_controls_dropped() -> None:
    assert untrusted.text("a\x00b\x1b[0mc\u202e", 100) == "ab[0mc"
    capped = untrusted.text("x" * 50_000, 1000)
    assert len(capped) == 1000 and capped.endswith("[truncated]")
    assert untrusted.text(12345) == "" and untrusted.text(None) == ""
    assert untrusted.web_url("javascript:alert(1)") is None
    assert untrusted.web_url("https://ok.example/a") == "https://ok.example/a"
    assert untrusted.identifier("../../etc") is None


def test_read_card_never_raises_anything_but_invalid_card() -> None:
    from plugins.a2a_connector.agent_cards import InvalidCard

    for data in (None, "card", 7, {"name": 5}, {"name": "n", "supportedInterfaces": "x"}):
        try:
            read_card(data, url="https://a.example")
        except InvalidCard:
            continue


async def test_answers_of_the_wrong_shape_end_in_a_failed_task_not_a_stuck_one(
    hubs: Hubs,
) -> None:
    """A server whose JSON-RPC answers are garbage: retried, then failed by the grace period."""
    person = await sign_up(await hubs.start(agent_grace_period_s=1.0))

    async def garbage(request: Request) -> JSONResponse:
        body = await request.json()
        result = {"task": {"id": ["x"], "status": {"state": {"nested": 1}}, "artifacts": "no"}}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": result})

    async with serve_remote(Instant(), streaming=False, extra_routes=[("/bad", garbage)]) as base:
        card = {"name": "Garbage", "url": base.url + "/bad", "protocolVersion": "0.3.0"}
        async with serve_remote(Instant(), card=card) as remote:
            agent = await person.add_remote(remote.url)
            task_id = await person.task_for(agent["id"])
            detail = await person.wait_task(task_id, lambda d: d["status"] == "failed")
    assert detail["error"] == "remote_unreachable"
