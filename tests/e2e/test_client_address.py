"""Whose address the limits count and the audit trail records, against `lineup serve`.

Without a trusted proxy (``LINEUP_TRUSTED_PROXY_HOPS=0``) ``X-Forwarded-For`` is only a
header: a client that changes it on every try still runs out of sign-in attempts, and the
trail names the connection's own address. With one trusted hop the hub counts the client
the proxy names (the header's last entry: what the proxy appended), so two people behind
the proxy have a budget each, and the trail names them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.sdk.live import LiveHub, live_hub

OWNER_EMAIL, PASSWORD = "owner@example.com", "correct horse"  # what live_hub creates
LOGINS_PER_SOURCE = 10  # hub.web.api.auth.LOGIN_FAILURES


@pytest.fixture
async def direct(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


@pytest.fixture
async def proxied(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub", LINEUP_TRUSTED_PROXY_HOPS="1") as running:
        yield running


async def log_in(hub: LiveHub, forwarded_for: str, email: str, password: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=hub.url, timeout=30) as browser:
        return await browser.post(
            "/api/v1/auth/login",
            json={"email": email, "password": password},
            headers={"X-Forwarded-For": forwarded_for},
        )


async def run_out_of_attempts(hub: LiveHub, forwarded_for: list[str]) -> None:
    """One wrong guess per header value, each at an account that does not exist (so only the
    per-address budget is spent), until the budget is gone."""
    assert len(forwarded_for) == LOGINS_PER_SOURCE
    for n, header in enumerate(forwarded_for):
        wrong = await log_in(hub, header, f"nobody{n}@example.com", "wrong password")
        assert wrong.status_code == 401, wrong.text


async def audited(hub: LiveHub, type: str) -> list[dict[str, Any]]:
    trail = await hub.api("GET", "/audit")
    return [e for e in trail["entries"] if e["type"] == type]


async def invite_from(hub: LiveHub, forwarded_for: str) -> None:
    """The owner, with their API token, invites someone: a person action the trail records."""
    invited = await hub.http.post(
        f"/api/v1/workspaces/{hub.workspace_id}/invitations",
        json={"role": "viewer"},
        headers={"X-Forwarded-For": forwarded_for},
    )
    assert invited.status_code == 201, invited.text


async def test_a_forged_forwarded_for_buys_no_fresh_attempts_without_a_trusted_proxy(
    direct: LiveHub,
) -> None:
    signed_in = await log_in(direct, "203.0.113.50", OWNER_EMAIL, PASSWORD)
    assert signed_in.status_code == 200, signed_in.text
    assert [e["address"] for e in await audited(direct, "account.signed_in")] == ["127.0.0.1"]
    await invite_from(direct, "203.0.113.51")
    assert [e["address"] for e in await audited(direct, "member.invited")] == ["127.0.0.1"]

    await run_out_of_attempts(direct, [f"203.0.113.{n}" for n in range(LOGINS_PER_SOURCE)])
    refused = await log_in(direct, "203.0.113.99", OWNER_EMAIL, PASSWORD)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "login_rate_limited"


async def test_clients_behind_a_trusted_proxy_are_counted_and_recorded_apart(
    proxied: LiveHub,
) -> None:
    # The proxy appends the address it saw to whatever the client sent: only that last
    # entry is believed, so what a client writes before it changes nothing.
    behind_proxy = [f"198.51.100.{n}, 203.0.113.7" for n in range(LOGINS_PER_SOURCE)]
    await run_out_of_attempts(proxied, behind_proxy)
    refused = await log_in(proxied, "198.51.100.99, 203.0.113.7", OWNER_EMAIL, PASSWORD)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "login_rate_limited"

    other = await log_in(proxied, "203.0.113.8", OWNER_EMAIL, PASSWORD)
    assert other.status_code == 200, other.text
    assert [e["address"] for e in await audited(proxied, "account.signed_in")] == ["203.0.113.8"]
    await invite_from(proxied, "198.51.100.1, 203.0.113.9")
    assert [e["address"] for e in await audited(proxied, "member.invited")] == ["203.0.113.9"]
