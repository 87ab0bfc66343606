"""Every kind of response carries the hardening headers and a strict CSP: pages, JSON,
API errors, page errors, health, metrics, the OpenAPI document, static files and MCP at
``/mcp/`` (an ASGI app beside Quart, refusing or serving)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from quart import Quart

from hub.core.people.accounts import create_user
from hub.testing import HubProcess
from tests.core.agent_setup import SECRET_KEY, paired_agent
from tests.security.conftest import Person

STRICT = {
    "default-src": "'none'",
    "script-src": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
}


def csp_of(header: str) -> dict[str, str]:
    return {
        directive.split(" ", 1)[0]: directive.partition(" ")[2]
        for directive in (part.strip() for part in header.split(";"))
        if directive
    }


@pytest.mark.parametrize(
    ("path", "token", "status"),
    [
        ("/", False, None),  # a page (or its redirect to sign in)
        ("/login", False, 200),
        ("/api/v1/workspaces", True, 200),  # JSON
        ("/api/v1/workspaces", False, 401),  # an API error
        ("/api/v1/workspaces/ws_nope/tasks", True, 404),
        ("/no/such/page", False, 404),
        ("/healthz", False, 200),
        ("/metrics", False, 200),
        ("/api/openapi.json", False, 200),
        ("/api/docs", False, 200),
        ("/mcp/", False, 401),  # MCP, mounted outside Quart's request pipeline
        ("/mcp/", True, 401),  # a person's token is not an agent credential
    ],
)
async def test_every_response_type_is_hardened(
    app: Quart, sign_up, path: str, token: bool, status: int | None
) -> None:  # type: ignore[no-untyped-def]
    person: Person = await sign_up()
    headers = person.headers if token else {}
    response = await app.test_client().get(path, headers=headers)
    if status is not None:
        assert response.status_code == status, (path, response.status_code)
    assert_hardened(path, response.headers)


def assert_hardened(path: str, headers: Any) -> None:
    policy = csp_of(headers.get("Content-Security-Policy", ""))
    for directive, value in STRICT.items():
        assert policy.get(directive) == value, (path, directive, policy)
    assert "'unsafe-inline'" not in headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"]


async def test_mcp_over_http_answers_are_hardened(
    db: str, database_url: str, tmp_path: Path
) -> None:
    _, workspace = await create_user("mcp@example.com", "correct horse")
    _, credential = await paired_agent(workspace)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "headers-test", "version": "1"},
        },
    }
    with HubProcess(database_url, tmp_path, LINEUP_SECRET_KEY=SECRET_KEY) as hub:
        async with httpx.AsyncClient(base_url=hub.url, timeout=30) as http:
            served = await http.post(
                "/mcp/",
                json=initialize,
                headers={
                    "Authorization": f"Bearer {credential}",
                    "Accept": "application/json, text/event-stream",
                },
            )
            refused = await http.post("/mcp/", json=initialize)
    assert served.status_code == 200, served.text
    assert refused.status_code == 401
    for response in (served, refused):
        assert_hardened("/mcp/", response.headers)


async def test_static_files_are_hardened_and_pages_carry_no_inline_script(app: Quart) -> None:
    client = app.test_client()
    login = await client.get("/login")
    html = (await login.get_data()).decode()
    # Every <script> loads a file of this site; none carries code of its own (a JSON data
    # block is data: the browser never runs it).
    for attributes, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S | re.I):
        if 'type="application/json"' not in attributes:
            assert body.strip() == "", body[:200]
    assert not re.search(r"\son[a-z]+\s*=", html, flags=re.I), "inline event handler"
    sources = re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="(/static/[^"]+)"', html)
    assert sources, "the page loads its assets from /static"
    static = await client.get(sources[0])
    assert static.status_code == 200
    assert "default-src 'none'" in static.headers["Content-Security-Policy"]
    assert static.headers["X-Content-Type-Options"] == "nosniff"
