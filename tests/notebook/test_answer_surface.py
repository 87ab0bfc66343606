"""Who may say which surface an answer came from: a token client may name ``notebook``
(or ``api``); a browser session is always ``web``; nobody may claim email or Telegram."""

from __future__ import annotations

from typing import Any

from quart import Quart

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Event, Workspace
from tests.core.scenario import make_agent
from tests.web.api.conftest import PASSWORD, Person
from tests.web.api.test_client_commands import send, until


async def pending_card(person: Person) -> str:
    agent = await make_agent(await Workspace.get(id=person.workspace_id), "builder")
    interaction_id = new_id("interaction")
    await append_event(
        person.workspace_id,
        "interaction.requested",
        {"interaction": {"id": interaction_id, "type": "approval", "title": "Ship it?"}},
        actor=f"agent:{agent.id}",
    )
    return interaction_id


async def resolved_via(workspace_id: str, interaction_id: str) -> Any:
    event = await Event.filter(workspace_id=workspace_id, type="interaction.resolved").first()
    assert event is not None and event.payload["interactionId"] == interaction_id
    return event.payload["via"]


async def test_a_token_client_records_its_answer_via_notebook(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("nora")
    card = await pending_card(me)
    status, answered = await me.post(
        f"/interactions/{card}/respond", {"optionId": "approve", "via": "notebook"}
    )
    assert status == 200 and answered["via"] == "notebook"
    assert answered["response"] == {"optionId": "approve"}  # 'via' is not part of the answer
    assert await resolved_via(me.workspace_id, card) == "notebook"


async def test_a_token_client_cannot_claim_another_channel(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("mallory")
    card = await pending_card(me)
    for claimed in ("telegram", "email", "web", "Notebook"):
        status, refused = await me.post(
            f"/interactions/{card}/respond", {"optionId": "approve", "via": claimed}
        )
        assert status == 422 and refused["error"]["code"] == "invalid_via", claimed
        assert "notebook" in refused["error"]["hint"]
    assert (await me.get(f"/interactions/{card}"))[1]["status"] == "pending"
    status, answered = await me.post(f"/interactions/{card}/respond", {"optionId": "reject"})
    assert status == 200 and answered["via"] == "api"


async def test_a_browser_session_stays_web(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("wendy")
    card = await pending_card(me)
    browser = app.test_client()
    await browser.post("/api/v1/auth/login", json={"email": me.email, "password": PASSWORD})
    url = me.url(f"/interactions/{card}/respond")
    refused = await browser.post(url, json={"optionId": "approve", "via": "notebook"})
    assert refused.status_code == 422
    assert (await refused.get_json())["error"]["code"] == "invalid_via"
    answered = await browser.post(url, json={"optionId": "approve"})
    assert answered.status_code == 200 and (await answered.get_json())["via"] == "web"


async def test_the_client_socket_takes_via_notebook_too(sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up("sal")
    card = await pending_card(me)
    path = f"/ws/client?workspace={me.workspace_id}"
    async with me.client.websocket(path, headers=me.headers) as socket:
        respond = {"interactionId": card, "response": {"optionId": "approve"}}
        await send(socket, "interaction.respond", {**respond, "via": "telegram"})
        refused = (await until(socket, "error"))["payload"]
        assert refused["code"] == "invalid_via"
        await send(socket, "interaction.respond", {**respond, "via": "notebook"})
        ack = (await until(socket, "ack"))["payload"]
        assert ack["result"]["via"] == "notebook"
    assert await resolved_via(me.workspace_id, card) == "notebook"
