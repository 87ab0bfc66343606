"""Every workspace route needs a caller, a membership, and ids of that workspace."""

from __future__ import annotations

import pytest
from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from hub.core.people.invitations import invite
from hub.core.store.models import Membership, Role, User, Workspace
from hub.core.work.conversations import create_conversation
from hub.core.work.tasks import create_task
from tests.core.scenario import make_agent
from tests.web.api.conftest import Person

# (method, path under /workspaces/{ws}, body); {agent}, {conversation}, {task} and
# {interaction} are filled with ids of the workspace the test picks.
WORKSPACE_ROUTES: list[tuple[str, str, dict[str, object] | None]] = [
    ("POST", "/pairing-codes", None),
    ("GET", "/agents", None),
    ("GET", "/agents/{agent}", None),
    ("POST", "/agents/{agent}/confirm", {"name": "mine now"}),
    ("POST", "/agents/{agent}/revoke", None),
    ("GET", "/conversations", None),
    ("POST", "/conversations", {"title": "t", "agentIds": ["{agent}"]}),
    ("GET", "/conversations/{conversation}", None),
    ("GET", "/conversations/{conversation}/messages", None),
    ("POST", "/conversations/{conversation}/messages", {"content": "hi"}),
    ("GET", "/tasks", None),
    ("POST", "/tasks", {"title": "t", "targetAgentId": "{agent}"}),
    ("GET", "/tasks/{task}", None),
    ("POST", "/tasks/{task}/cancel", None),
    ("GET", "/inbox", None),
    ("GET", "/interactions/{interaction}", None),
    ("POST", "/interactions/{interaction}/respond", {"optionId": "approve"}),
    ("GET", "/events", None),
    ("GET", "/members", None),
    ("POST", "/members/{member}/role", {"role": "member"}),
    ("POST", "/members/{member}/remove", None),
    ("GET", "/invitations", None),
    ("POST", "/invitations", {"role": "member"}),
    ("POST", "/invitations/{invitation}/revoke", None),
]
# What a viewer meets: answers are refused by who may answer, members are the owners' to
# manage, and everything else that changes something is refused to viewers outright.
VIEWER_REFUSALS = {
    "/interactions/{interaction}/respond": "not_allowed_to_answer",
    "/members/{member}/role": "owners_only",
    "/members/{member}/remove": "owners_only",
    "/invitations": "owners_only",
    "/invitations/{invitation}/revoke": "owners_only",
}
OBJECT_ROUTES = [r for r in WORKSPACE_ROUTES if "{" in r[1]]
ACCOUNT_ROUTES = [
    ("GET", "/api/v1/me"),
    ("GET", "/api/v1/workspaces"),
    ("GET", "/api/v1/auth/tokens"),
    ("POST", "/api/v1/auth/tokens"),
    ("POST", "/api/v1/auth/tokens/tok_x/revoke"),
]


async def objects_of(workspace_id: str) -> dict[str, str]:
    workspace = await Workspace.get(id=workspace_id)
    agent = await make_agent(workspace)
    conversation = await create_conversation(workspace_id, "c", [agent.id], by="user:usr_t")
    task = await create_task(workspace_id, "t", by="user:usr_t", target_agent_id=agent.id)
    by_agent = f"agent:{agent.id}"
    await append_event(workspace_id, "task.accepted", {"taskId": task.id}, actor=by_agent)
    interaction = new_id("interaction")
    await append_event(
        workspace_id,
        "interaction.requested",
        {"interaction": {"id": interaction, "type": "approval", "title": "ok?"}},
        actor=by_agent,
        task_id=task.id,
    )
    owner = await Membership.filter(workspace_id=workspace_id, role=Role.OWNER).first()
    assert owner is not None
    invitation, _ = await invite(
        workspace_id, Role.MEMBER, by=await User.get(id=owner.user_id), secret_key="test"
    )
    return {
        "agent": agent.id,
        "conversation": conversation.id,
        "task": task.id,
        "interaction": interaction,
        "member": owner.user_id,
        "invitation": invitation.id,
    }


def filled(value: object, ids: dict[str, str]) -> object:
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, list):
        return [filled(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: filled(v, ids) for k, v in value.items()}
    return value


async def call(app: Quart, method: str, url: str, body: object, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    client = app.test_client()
    kwargs = {"json": body} if body is not None else {}
    return await client.open(url, method=method, headers=headers, **kwargs)


@pytest.mark.parametrize(("method", "path", "body"), WORKSPACE_ROUTES)
async def test_nothing_without_credentials(app: Quart, sign_up, method, path, body) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up()
    ids = await objects_of(owner.workspace_id)
    before = await last_sequence(owner.workspace_id)
    for headers in ({}, {"Authorization": "Bearer lu_pat_not-a-token"}):
        response = await call(
            app,
            method,
            owner.url(filled(path, ids)),
            filled(body, ids),
            headers,  # type: ignore[arg-type]
        )
        assert response.status_code == 401, (method, path)
        error = (await response.get_json())["error"]
        assert error["code"] in ("not_signed_in", "invalid_token") and error["hint"]
    assert await last_sequence(owner.workspace_id) == before


@pytest.mark.parametrize(("method", "path"), ACCOUNT_ROUTES)
async def test_account_routes_need_credentials(app: Quart, method: str, path: str) -> None:
    response = await call(app, method, path, {"name": "x"} if method == "POST" else None, {})
    assert response.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), WORKSPACE_ROUTES)
async def test_another_persons_workspace_is_not_found(
    app: Quart, sign_up, method, path, body
) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up("owner")
    stranger: Person = await sign_up("stranger")
    ids = await objects_of(owner.workspace_id)
    before = await last_sequence(owner.workspace_id)
    response = await call(
        app,
        method,
        owner.url(filled(path, ids)),
        filled(body, ids),
        stranger.headers,  # type: ignore[arg-type]
    )
    assert response.status_code == 404, (method, path)
    assert (await response.get_json())["error"]["code"] == "workspace_not_found"
    assert await last_sequence(owner.workspace_id) == before


@pytest.mark.parametrize(("method", "path", "body"), OBJECT_ROUTES)
async def test_another_workspaces_ids_are_not_found_in_mine(
    app: Quart, sign_up, method, path, body
) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up("owner")
    me: Person = await sign_up("me")
    theirs = await objects_of(owner.workspace_id)
    before_theirs = await last_sequence(owner.workspace_id)
    before_mine = await last_sequence(me.workspace_id)
    response = await call(
        app,
        method,
        me.url(filled(path, theirs)),
        filled(body, theirs),
        me.headers,  # type: ignore[arg-type]
    )
    assert response.status_code == 404, (method, path, await response.get_data())
    assert (await response.get_json())["error"]["code"].endswith("_not_found")
    assert await last_sequence(owner.workspace_id) == before_theirs
    assert await last_sequence(me.workspace_id) == before_mine


async def test_a_viewer_may_look_but_not_act(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    from hub.core.ids import new_id as make_id

    owner: Person = await sign_up("owner")
    viewer: Person = await sign_up("viewer")
    ids = await objects_of(owner.workspace_id)
    await Membership.create(
        id=make_id("membership"),
        workspace_id=owner.workspace_id,
        user_id=viewer.user_id,
        role=Role.VIEWER,
    )
    before = await last_sequence(owner.workspace_id)
    for method, path, body in WORKSPACE_ROUTES:
        response = await call(
            app,
            method,
            owner.url(filled(path, ids)),
            filled(body, ids),
            viewer.headers,  # type: ignore[arg-type]
        )
        refusal = VIEWER_REFUSALS.get(path, "read_only_member")
        if method == "GET" and path not in VIEWER_REFUSALS:
            assert response.status_code == 200, path
        else:
            assert response.status_code == 403, path
            assert (await response.get_json())["error"]["code"] == refusal, path
    assert await last_sequence(owner.workspace_id) == before
