"""The audit trail holds every decision, pairing, confirmation, revocation and cancel, with
who, via what and when; it names the option chosen, never typed input; only members see it.
Sign-ins, failed attempts, sign-outs and personal tokens are in it too (see
test_sign_in_audit.py); the hub's log (``hub.audit``) has them as well."""

from __future__ import annotations

import logging

import pytest
from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Workspace
from tests.core.agent_setup import paired_agent
from tests.security.conftest import Person
from tests.web.api.conftest import PASSWORD


async def test_decisions_and_revocations_are_in_the_audit_trail(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    stranger: Person = await sign_up()
    workspace = await Workspace.get(id=me.workspace_id)
    agent, _ = await paired_agent(workspace)
    status, _ = await me.post(f"/agents/{agent.id}/confirm", {"name": "builder"})
    assert status == 200
    _, task = await me.post(
        "/tasks", {"title": "deploy", "description": "", "targetAgentId": agent.id}
    )
    by_agent = f"agent:{agent.id}"
    await append_event(me.workspace_id, "task.accepted", {"taskId": task["id"]}, actor=by_agent)
    card_id = new_id("interaction")
    await append_event(
        me.workspace_id,
        "interaction.requested",
        {"interaction": {"id": card_id, "type": "input", "title": "Deploy key?"}},
        actor=by_agent,
        task_id=task["id"],
    )
    status, answered = await me.post(f"/interactions/{card_id}/respond", {"text": "hunter2-secret"})
    assert status == 200, answered
    await me.post(f"/tasks/{task['id']}/cancel", {"reason": "changed my mind"})
    status, _ = await me.post(f"/agents/{agent.id}/revoke")
    assert status == 200

    status, trail = await me.get("/audit")
    assert status == 200
    kinds = [entry["type"] for entry in trail["entries"]]
    assert kinds == [
        "account.signed_in",  # signing up (tests.web.api.conftest.sign_up) signs in
        "account.token_created",  # and makes the token this test calls with
        "agent.paired",
        "agent.confirmed",
        "interaction.resolved",
        "task.cancel_requested",
        "agent.revoked",
    ], kinds
    decision = trail["entries"][4]
    assert decision["actor"] == f"user:{me.user_id}" and decision["via"] == "api"
    assert decision["interactionId"] == card_id and decision["at"]
    assert "hunter2-secret" not in str(trail)
    sequences = [entry["sequence"] for entry in trail["entries"]]
    assert sequences == sorted(sequences)
    _, rest = await me.get(f"/audit?after={sequences[4]}")
    assert [e["type"] for e in rest["entries"]] == kinds[5:]
    # Another person's audit trail reads as not found.
    refused = await stranger.client.get(me.url("/audit"), headers=stranger.headers)
    assert refused.status_code == 404


async def test_every_sign_in_is_also_written_to_the_hubs_log(
    app: Quart, sign_up, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    caplog.set_level(logging.INFO, logger="hub.audit")
    browser = app.test_client()
    for password in ("not my password", PASSWORD):
        await browser.post("/api/v1/auth/login", json={"email": me.email, "password": password})
    await browser.post(
        "/api/v1/auth/login", json={"email": "nobody@example.com", "password": "guess"}
    )
    lines = [r.getMessage() for r in caplog.records if r.name == "hub.audit"]
    assert lines == [
        f"failed sign-in: user {me.user_id} from <local> via api",
        f"sign-in: user {me.user_id} from <local> via api",
        # An address without an account is in no workspace: the hub's log is its only trace.
        "failed sign-in: no such account from <local> via api",
    ], lines
    assert "not my password" not in caplog.text and "nobody@example.com" not in caplog.text
