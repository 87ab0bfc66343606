"""Sign-ins, failed attempts, sign-outs and personal API tokens are entries of the audit
trail the API serves, with who, when, the outcome and the client's address — never a
password or a token's secret. Over real sockets against ``lineup serve``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from hub.testing import HubProcess

PASSWORD = "correct horse battery"
WRONG = "Tr0ub4dor&3-not-mine"


async def account_entries(api: httpx.AsyncClient, workspace_id: str) -> list[dict[str, Any]]:
    trail = await api.get(f"/workspaces/{workspace_id}/audit")
    assert trail.status_code == 200, trail.text
    return [e for e in trail.json()["entries"] if e["type"].startswith("account.")]


async def test_sign_ins_and_tokens_are_in_the_audit_trail(
    database_url: str, tmp_path: Path
) -> None:
    with HubProcess(database_url, tmp_path) as hub:
        async with httpx.AsyncClient(base_url=hub.url + "/api/v1", timeout=15) as browser:
            registered = await browser.post(
                "/auth/register", json={"email": "ada@example.com", "password": PASSWORD}
            )
            assert registered.status_code == 201, registered.text
            user_id, workspace_id = registered.json()["userId"], registered.json()["workspaceId"]
            await browser.post("/auth/logout")

            wrong = await browser.post(
                "/auth/login", json={"email": "ADA@example.com", "password": WRONG}
            )
            assert wrong.status_code == 401
            unknown = await browser.post(
                "/auth/login", json={"email": "eve@example.com", "password": WRONG}
            )
            assert unknown.status_code == 401
            signed_in = await browser.post(
                "/auth/login", json={"email": "ada@example.com", "password": PASSWORD}
            )
            assert signed_in.status_code == 200
            created = await browser.post("/auth/tokens", json={"name": "laptop"})
            assert created.status_code == 201
            token = created.json()
            revoked = await browser.post(f"/auth/tokens/{token['id']}/revoke")
            assert revoked.status_code == 200
            reader = (await browser.post("/auth/tokens", json={"name": "reader"})).json()

        api = httpx.AsyncClient(
            base_url=hub.url + "/api/v1",
            headers={"Authorization": f"Bearer {reader['token']}"},
            timeout=15,
        )
        async with api:
            entries = await account_entries(api, workspace_id)
        log = hub.log()

    me = f"user:{user_id}"
    assert [(e["type"], e["actor"], e.get("outcome")) for e in entries] == [
        ("account.signed_in", me, "succeeded"),  # signing up signs in
        ("account.signed_out", me, None),
        # Whoever typed a wrong password proved nothing: the attempt is nobody's deed.
        ("account.sign_in_failed", "anonymous", "failed"),
        ("account.signed_in", me, "succeeded"),
        ("account.token_created", me, None),
        ("account.token_revoked", me, None),
        ("account.token_created", me, None),
    ], entries
    for entry in entries:
        assert entry["userId"] == user_id and entry["address"] == "127.0.0.1", entry
        assert entry["at"] and entry["sequence"] > 0
        assert entry["via"] == "api"
    assert entries[4]["tokenId"] == token["id"] and entries[4]["name"] == "laptop"
    # Never a secret, and nothing about an address that has no account.
    for secret in (PASSWORD, WRONG, token["token"], reader["token"]):
        assert secret not in str(entries) and secret not in log
    assert "eve@example.com" not in str(entries) and "eve@example.com" not in log


async def test_a_stranger_cannot_read_someone_elses_sign_ins(
    database_url: str, tmp_path: Path
) -> None:
    with HubProcess(database_url, tmp_path) as hub:
        async with httpx.AsyncClient(base_url=hub.url + "/api/v1", timeout=15) as owner:
            mine = await owner.post(
                "/auth/register", json={"email": "own@example.com", "password": PASSWORD}
            )
            workspace_id = mine.json()["workspaceId"]
        async with httpx.AsyncClient(base_url=hub.url + "/api/v1", timeout=15) as stranger:
            await stranger.post(
                "/auth/register", json={"email": "other@example.com", "password": PASSWORD}
            )
            refused = await stranger.get(f"/workspaces/{workspace_id}/audit")
            assert refused.status_code == 404
            theirs = (await stranger.get("/workspaces")).json()
            assert workspace_id not in str(theirs)
