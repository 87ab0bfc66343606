"""Bad input comes back in the contract's error shape with a stable code, and changes nothing."""

from __future__ import annotations

import pytest
from quart import Quart

from hub.core.log.events import last_sequence
from hub.core.store.models import Task, Workspace
from tests.core.scenario import make_agent
from tests.web.api.conftest import Person


@pytest.fixture
async def me(sign_up) -> Person:  # type: ignore[no-untyped-def]
    person: Person = await sign_up()
    return person


def assert_error_shape(body: dict[str, object], code: str) -> dict[str, object]:
    error = body["error"]
    assert isinstance(error, dict)
    assert error["code"] == code and error["message"] and error["hint"]
    return error


async def test_a_missing_field_names_the_field(me: Person) -> None:
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    status, body = await me.post("/tasks", {"description": "no title", "targetAgentId": agent.id})
    assert status == 422
    error = assert_error_shape(body, "invalid_input")
    assert error["details"] == {"fields": [{"field": "title", "problem": "Field required"}]}
    assert await Task.all().count() == 0


async def test_wrong_types_and_limits(me: Person) -> None:
    before = await last_sequence(me.workspace_id)
    cases = [
        ("/conversations", {"title": "t", "agentIds": "agt_1"}, "agentIds"),
        ("/conversations", {"title": ""}, "title"),
        ("/conversations", {"title": "x" * 501}, "title"),
        ("/tasks", {"title": 5, "targetAgentId": "agt_1"}, "title"),
        (
            "/tasks",
            {"title": "t", "targetAgentId": "agt_1", "conversationId": ["c"]},
            "conversationId",
        ),
    ]
    for path, body, field in cases:
        status, answer = await me.post(path, body)
        assert status == 422, (path, body)
        error = assert_error_shape(answer, "invalid_input")
        assert [f["field"] for f in error["details"]["fields"]] == [field]  # type: ignore[index]
    assert await last_sequence(me.workspace_id) == before


async def test_bodies_that_are_not_json_objects(me: Person) -> None:
    url = me.url("/conversations")
    for data, content_type in (
        (b"{not json", "application/json"),
        (b"title=x", "application/x-www-form-urlencoded"),
        (b"[1, 2]", "application/json"),
        (b"", "application/json"),
    ):
        response = await me.client.post(
            url, data=data, headers={**me.headers, "Content-Type": content_type}
        )
        assert response.status_code == 400, data
        assert_error_shape(await response.get_json(), "invalid_json")
    assert await last_sequence(me.workspace_id) == me.log_start


async def test_query_strings_are_checked(me: Person) -> None:
    for path in ("/events?after=abc", "/events?after=-1", "/tasks?limit=0", "/inbox?limit=1000"):
        status, body = await me.get(path)
        assert status == 422, path
        assert_error_shape(body, "invalid_input")


async def test_respond_payload_types_are_checked(me: Person) -> None:
    status, body = await me.post("/interactions/int_x/respond", {"optionIds": "approve"})
    assert status == 422
    error = assert_error_shape(body, "invalid_input")
    assert error["details"]["fields"][0]["field"] == "optionIds"  # type: ignore[index]


async def test_unknown_routes_and_methods_keep_the_shape(app: Quart, me: Person) -> None:
    response = await me.client.get("/api/v1/nothing-here", headers=me.headers)
    assert response.status_code == 404
    assert_error_shape(await response.get_json(), "not_found")
    response = await me.client.delete(me.url("/tasks"), headers=me.headers)
    assert response.status_code == 405
    assert (await response.get_json())["error"]["code"] == "method_not_allowed"
