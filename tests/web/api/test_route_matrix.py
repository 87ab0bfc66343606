"""The isolation matrix, generated from the route table (spec §11).

Every HTTP route the app serves is tried with no credentials and with another workspace's
token, its path filled with ids of the first workspace's objects. Nothing but an explicit
list of public routes may answer anything other than a refusal; no route may answer 5xx.
A new route is covered the moment it is registered: if the test cannot fill one of its
path parameters it fails and asks for the parameter, instead of skipping the route.

ASGI apps mounted in front of Quart (MCP at ``/mcp/``) are not in the route table; they are
found in the app's ASGI chain (each layer names its ``mount`` and passes the rest to
``inner``) and tried the same way, with an agent credential of the right kind as well.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from quart import Quart

from hub.core.agents.registry import revoke_agent
from hub.core.approvals.rules import create_rule
from hub.core.ids import MAX_ID_LENGTH, new_id
from hub.core.log.events import append_event
from hub.core.notify.push_subscriptions import subscribe
from hub.core.people.accounts import create_api_token
from hub.core.store.models import User, Workspace
from hub.protocol.clock import utcnow
from tests.core.agent_setup import paired_agent
from tests.web.api.conftest import Person
from tests.web.api.test_access import objects_of

# Routes anyone may call: sign-in and sign-up, health, the API's description, static files,
# the agent gateway (it authenticates agents itself) and signed email links (the signature
# is the credential; see tests/channels for their refusals).
PUBLIC = {
    "/",
    "/login",
    "/signup",
    "/healthz",
    "/livez",
    "/readyz",
    "/metrics",
    "/api/docs",
    "/api/openapi.json",
    "/api/v1/auth/login",
    "/api/v1/auth/register",
    "/api/v1/auth/logout",  # ending no session is a no-op
    # Forgot your password? for API clients: the same as the pages' (tests/web/api/
    # test_password_reset.py), answering alike for every address.
    "/api/v1/auth/password-reset",
    "/api/v1/auth/password-reset/complete",
    "/static/<path:filename>",
    "/lap/v0.1",
    "/a/<token>",
    # A batch mail's link: its signed token is the credential (test_email_batches.py).
    "/b/<token>",
    # The installable app's files hold nothing of anyone's (tests/web/pages/test_pwa.py).
    "/manifest.webmanifest",
    "/service-worker.js",
    "/offline",
    # Forgot your password?: asks nothing of anyone, the reset link's token is the credential
    # (tests/web/pages/test_password_reset.py).
    "/login/code",  # finishes a sign-in the session holds a right password for
    "/password/forgot",
    "/password/reset/<token>",
    "/join/<token>",  # an invitation link: the token is the credential (tests/core/test_members.py)
}
# Routes about the caller rather than a workspace: another person reaches their own data.
CALLER_SCOPED = {
    "/api/v1/me",
    "/api/v1/me/password",
    "/api/v1/me/two-factor",
    "/api/v1/me/two-factor/setup",
    "/api/v1/me/two-factor/confirm",
    "/api/v1/me/two-factor/disable",
    "/api/v1/workspaces",
    "/api/v1/auth/tokens",
    "/api/v1/me/channels",
    "/api/v1/me/channels/telegram/link",
    "/api/v1/me/channels/telegram",
    "/api/v1/me/channels/feishu/link",
    "/api/v1/me/channels/feishu",
    "/api/v1/me/channels/slack/link",
    "/api/v1/me/channels/slack",
    "/api/v1/me/notification-preferences",
    "/api/v1/push/public-key",  # the hub's own public key, the same for everyone
    "/api/v1/me/push-subscriptions",
    "/api/v1/me/push-subscriptions/<subscription_id>",
    "/api/v1/me/push-subscriptions/<subscription_id>/test",
    "/settings",  # the caller's own first workspace's Settings (a redirect)
    "/dev/outbox",  # the caller's own mails (see tests/channels/test_email.py)
    "/logout",
    "/api/v1/invitations/accept",  # the caller joins whatever the token in the body invites to
}
REFUSED = {401, 403, 404, 405, 302, 303}


async def world(owner: Person) -> dict[str, str]:
    ids = await objects_of(owner.workspace_id)
    artifact = new_id("artifact")
    await append_event(
        owner.workspace_id,
        "artifact.created",
        {"artifactId": artifact, "taskId": ids["task"], "name": "log", "url": "https://x.test/l"},
        actor=f"agent:{ids['agent']}",
    )
    token, _ = await create_api_token(await User.get(id=owner.user_id), "second")
    rule = await create_rule(
        owner.workspace_id,
        policy={"mode": "any"},
        risk="high",
        agent_id=None,
        card_type=None,
        created_by=f"user:{owner.user_id}",
        now=utcnow(),
    )
    browser = {
        "endpoint": "https://push.example/owner",
        "keys": {
            "p256dh": base64.urlsafe_b64encode(b"\x04" + bytes(64)).decode(),
            "auth": base64.urlsafe_b64encode(bytes(16)).decode(),
        },
    }
    subscription = await subscribe(owner.user_id, browser)
    return {
        "subscription_id": subscription.id,
        "ws": owner.workspace_id,
        "workspace_id": owner.workspace_id,
        "agent_id": ids["agent"],
        "conversation_id": ids["conversation"],
        "task_id": ids["task"],
        "interaction_id": ids["interaction"],
        "artifact_id": artifact,
        "token_id": token.id,
        "user_id": owner.user_id,
        "invitation_id": ids["invitation"],
        "rule_id": rule.id,
        "name": "mail.eml",
    }


def concrete(rule: Any, ids: dict[str, str]) -> str:
    path = rule.rule
    for argument in rule.arguments:
        assert argument in ids, f"route {rule.rule}: teach this test a value for <{argument}>"
        path = path.replace(f"<{argument}>", ids[argument])
    return path


def http_rules(app: Quart) -> list[tuple[str, Any]]:
    rules = []
    for rule in app.url_map.iter_rules():
        if rule.websocket or rule.rule in PUBLIC:
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            rules.append((method, rule))
    return rules


async def call(app: Quart, method: str, path: str, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"name": "x", "title": "x", "content": "x", "optionId": "approve"}
    client = app.test_client()
    response = await client.open(
        path, method=method, headers=headers, json=None if method == "GET" else body
    )
    return response.status_code, await response.get_data(as_text=True)


async def test_no_route_serves_another_workspace_or_a_stranger(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    owner, stranger = await sign_up("owner"), await sign_up("stranger")
    ids = await world(owner)
    rules = http_rules(app)
    assert len(rules) > 40  # the matrix really is generated from the app
    for method, rule in rules:
        path = concrete(rule, ids)
        anonymous, body = await call(app, method, path, None)
        assert anonymous in REFUSED, (method, path, anonymous, body[:300])
        if anonymous in (302, 303):
            assert rule.rule.startswith(("/w/", "/logout", "/dev/", "/settings")), (method, path)
        if rule.rule in CALLER_SCOPED:
            continue
        status, body = await call(app, method, path, stranger.token)
        assert status in REFUSED, (method, path, status, body[:300])
        assert status < 500


async def test_refusals_are_json_with_a_code_and_a_hint(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    owner, stranger = await sign_up("owner"), await sign_up("stranger")
    ids = await world(owner)
    for method, rule in http_rules(app):
        if not rule.rule.startswith("/api/") or rule.rule in CALLER_SCOPED:
            continue
        status, body = await call(app, method, concrete(rule, ids), stranger.token)
        error = json.loads(body)["error"]
        assert error["code"] and error["hint"], (rule.rule, body)
        assert ids["task_id"] not in error["message"] or status == 404


async def test_an_id_longer_than_any_id_reads_as_not_found_on_every_route(
    app: Quart, sign_up
) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up("owner")
    ids = await world(owner)
    impossible = "x" * (MAX_ID_LENGTH + 1)
    for method, rule in http_rules(app):
        for argument in rule.arguments:
            if argument != "ws" and not argument.endswith("_id"):
                continue
            path = concrete(rule, {**ids, argument: impossible})
            status, body = await call(app, method, path, owner.token)
            assert status == 404, (method, path, status, body[:300])
    # The client socket takes its workspace from the query: the same answer.
    path = f"/ws/client?workspace={impossible}"
    async with app.test_client().websocket(path, headers=owner.headers) as socket:
        refusal = json.loads(await socket.receive())
    assert refusal["payload"]["code"] == "workspace_not_found", refusal


def mounted_paths(app: Quart) -> list[str]:
    paths, layer = [], app.asgi_app
    while hasattr(layer, "inner"):
        if getattr(layer, "mount", None):
            paths.append(layer.mount)
        layer = layer.inner
    return paths


async def test_apps_mounted_beside_the_route_table_refuse_outsiders(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up("owner")
    mounts = mounted_paths(app)
    assert "/mcp" in mounts  # the MCP plugin is installed in the test environment
    agent, revoked_credential = await paired_agent(await Workspace.get(id=owner.workspace_id))
    await revoke_agent(owner.workspace_id, agent.id, by="system")
    refused = {
        "nobody": None,
        "a made-up token": "lu_agent_not_a_credential",
        # A person's own API token is not an agent credential, even for their workspace.
        "a person's token": owner.token,
        "a revoked agent": revoked_credential,
    }
    for mount in mounts:
        for path in (mount, mount + "/", mount + "/x"):
            for method in ("GET", "POST", "DELETE"):
                for who, token in refused.items():
                    status, body = await call(app, method, path, token)
                    assert status == 401, (method, path, who, status, body[:300])
                    assert json.loads(body)["error"]["hint"], body
