"""Every kind of response carries the hardening headers and a strict CSP: pages, JSON,
API errors, page errors, health, metrics, the OpenAPI document and static files."""

from __future__ import annotations

import re

import pytest
from quart import Quart

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
    policy = csp_of(response.headers.get("Content-Security-Policy", ""))
    for directive, value in STRICT.items():
        assert policy.get(directive) == value, (path, directive, policy)
    assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"]


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
