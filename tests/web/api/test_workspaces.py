"""Workspaces, pairing codes, agents, and the OpenAPI description."""

from __future__ import annotations

from quart import Quart

from hub.core.agents.registry import redeem_pairing_code
from hub.core.store.models import Agent
from hub.host.settings import settings_of
from tests.web.api.conftest import Person


async def test_my_workspaces(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("kim")
    response = await me.client.get("/api/v1/workspaces", headers=me.headers)
    [workspace] = (await response.get_json())["workspaces"]
    assert workspace["id"] == me.workspace_id and workspace["role"] == "owner"
    assert workspace["name"] == "kim's workspace"
    # Signing up and its token are the first entries of the log (the audit trail).
    assert workspace["lastSequence"] == 2
    assert workspace["epoch"]


async def test_a_pairing_code_comes_with_the_command_to_run(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    status, pairing = await me.post("/pairing-codes")
    assert status == 201
    code = pairing["code"]
    assert len(code) == 9 and code[4] == "-"
    assert pairing["expiresAt"].endswith("Z")
    assert pairing["command"] == f"lineup agent demo --hub http://hub.example.test --pair {code}"
    # The code pairs an agent, which then shows as pending until its name is confirmed.
    agent, _ = await redeem_pairing_code(
        code,
        name="laptop",
        runtime="python",
        version="1.0",
        capabilities=["shell"],
        secret_key=settings_of(app).secret_key,
    )
    status, listed = await me.get("/agents")
    [shown] = listed["agents"]
    assert shown["id"] == agent.id and shown["status"] == "pending"
    assert shown["capabilities"] == ["shell"] and "lastHeartbeatAt" in shown


async def test_confirm_and_revoke_an_agent(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    _, pairing = await me.post("/pairing-codes")
    agent, _ = await redeem_pairing_code(
        pairing["code"],
        name="proposed",
        runtime="",
        version="",
        capabilities=[],
        secret_key=settings_of(app).secret_key,
    )
    status, error = await me.post(f"/agents/{agent.id}/confirm", {"name": ""})
    assert status == 422 and error["error"]["code"] == "invalid_input"
    status, confirmed = await me.post(f"/agents/{agent.id}/confirm", {"name": "build-bot"})
    assert status == 200 and confirmed["name"] == "build-bot"
    assert confirmed["status"] in ("online", "offline") and confirmed["confirmedAt"]
    status, revoked = await me.post(f"/agents/{agent.id}/revoke")
    assert status == 200 and revoked["status"] == "revoked"
    assert (await Agent.get(id=agent.id)).revoked_at is not None
    # A revoked agent takes no more work.
    status, refused = await me.post("/tasks", {"title": "t", "targetAgentId": agent.id})
    assert status == 409 and refused["error"]["code"] == "agent_revoked"


async def test_openapi_describes_the_api(app: Quart) -> None:
    client = app.test_client()
    response = await client.get("/api/openapi.json")
    assert response.status_code == 200
    document = await response.get_json()
    paths = document["paths"]
    # Only the JSON API: pages and email links answer HTML, and are no JSON operations.
    assert all(path.startswith("/api/v1/") for path in paths), sorted(paths)
    for path in (
        "/api/v1/auth/register",
        "/api/v1/auth/login",
        "/api/v1/auth/tokens",
        "/api/v1/workspaces",
        "/api/v1/workspaces/{ws}/pairing-codes",
        "/api/v1/workspaces/{ws}/agents",
        "/api/v1/workspaces/{ws}/agents/{agent_id}/confirm",
        "/api/v1/workspaces/{ws}/agents/{agent_id}/revoke",
        "/api/v1/workspaces/{ws}/conversations",
        "/api/v1/workspaces/{ws}/conversations/{conversation_id}/messages",
        "/api/v1/workspaces/{ws}/tasks",
        "/api/v1/workspaces/{ws}/tasks/{task_id}",
        "/api/v1/workspaces/{ws}/tasks/{task_id}/cancel",
        "/api/v1/workspaces/{ws}/inbox",
        "/api/v1/workspaces/{ws}/interactions/{interaction_id}",
        "/api/v1/workspaces/{ws}/interactions/{interaction_id}/respond",
        "/api/v1/workspaces/{ws}/events",
        "/api/v1/workspaces/{ws}/search",
    ):
        assert path in paths, path
    found = paths["/api/v1/workspaces/{ws}/search"]["get"]
    assert {p["name"] for p in found["parameters"]} == {"ws", "q", "cursor", "limit"}
    answer = found["responses"]["200"]["content"]["application/json"]["schema"]
    result = document["components"]["schemas"]["SearchResult"]
    assert answer["properties"]["items"]["items"]["$ref"].endswith("/SearchResult")
    assert set(answer["required"]) == {"items", "nextCursor"}
    assert {"kind", "id", "title", "text", "url"} <= set(result["required"])
    create = paths["/api/v1/workspaces/{ws}/tasks"]["post"]
    schema = create["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"title", "targetAgentId"}
    assert set(schema["properties"]) == {
        "title",
        "description",
        "targetAgentId",
        "conversationId",
    }
    assert create["responses"]["default"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    assert "code" in document["components"]["schemas"]["Error"]["properties"]["error"]["properties"]
    filters = {p["name"] for p in paths["/api/v1/workspaces/{ws}/tasks"]["get"]["parameters"]}
    assert {"status", "limit"} <= filters
    docs = await client.get("/api/docs")
    assert docs.status_code == 200 and b"swagger" in (await docs.get_data()).lower()
