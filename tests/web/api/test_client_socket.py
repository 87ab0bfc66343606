"""The client WebSocket: events after a sequence, then live, in order and once; epochs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from quart import Quart
from quart.testing.connections import WebsocketDisconnectError
from tortoise.exceptions import DBConnectionError

from hub.core.log.events import append_event
from hub.core.store.models import ApiToken, Membership, Task, Workspace
from hub.protocol.clock import utcnow
from hub.testing import eventually
from hub.web import client_socket
from tests.core.scenario import make_agent
from tests.web.api.conftest import PASSWORD, Person


async def receive(socket: Any) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await asyncio.wait_for(socket.receive(), timeout=10))
    return frame


async def note(person: Person, n: int) -> int:
    result = await append_event(person.workspace_id, "note.added", {"n": n}, actor="system")
    return result.sequence


def path(person: Person, **args: object) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"workspace": person.workspace_id, **args}.items())
    return f"/ws/client?{query}"


async def test_backlog_after_a_sequence_then_live(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    start = me.log_start
    for n in range(4):
        await note(me, n)
    async with me.client.websocket(path(me, after=start + 2), headers=me.headers) as socket:
        welcome = await receive(socket)
        assert welcome["type"] == "client.welcome"
        epoch = (await Workspace.get(id=me.workspace_id)).epoch
        assert welcome["payload"] == {"epoch": epoch, "lastSequence": start + 4, "after": start + 2}
        assert [(await receive(socket))["sequence"] for _ in range(2)] == [start + 3, start + 4]
        writers = [asyncio.create_task(note(me, n)) for n in range(10)]
        live = [await receive(socket) for _ in range(10)]
        await asyncio.gather(*writers)
        assert [f["sequence"] for f in live] == list(range(start + 5, start + 15))
        assert all(f["type"] == "note.added" and f["workspaceId"] == me.workspace_id for f in live)


async def test_the_session_cookie_works_too(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    browser = app.test_client()
    await browser.post("/api/v1/auth/login", json={"email": me.email, "password": PASSWORD})
    await note(me, 1)
    async with browser.websocket(path(me)) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        assert (await receive(socket))["sequence"] == 1


async def test_another_epoch_means_resync(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    for n in range(3):
        await note(me, n)
    async with me.client.websocket(
        path(me, after=2, epoch="evt_old"), headers=me.headers
    ) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        resync = await receive(socket)
        assert resync["type"] == "system.resync_required"
        assert resync["payload"]["reason"] == "epoch_changed"
        assert resync["payload"]["lastSequence"] == me.log_start + 3
        # After the resync frame the socket follows the log from its end.
        await note(me, 9)
        assert (await receive(socket))["sequence"] == me.log_start + 4
    async with me.client.websocket(path(me, after=99), headers=me.headers) as socket:
        await receive(socket)
        assert (await receive(socket))["payload"]["reason"] == "ahead_of_log"


async def test_a_client_far_behind_reloads_instead_of_replaying(  # type: ignore[no-untyped-def]
    app: Quart, sign_up, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_socket, "REPLAY_WINDOW", 5)
    me: Person = await sign_up()
    for n in range(8):
        await note(me, n)
    end = me.log_start + 8
    # Starting late: told to load the current state, then the log follows from its end.
    async with me.client.websocket(path(me, after=0), headers=me.headers) as socket:
        assert (await receive(socket))["payload"]["lastSequence"] == end
        resync = await receive(socket)
        assert resync["type"] == "system.resync_required"
        assert resync["payload"]["reason"] == "far_behind"
        assert resync["payload"]["lastSequence"] == end
        await note(me, 9)
        assert (await receive(socket))["sequence"] == end + 1
    # Within the window, a client catches up event by event, as before.
    async with me.client.websocket(path(me, after=end - 3), headers=me.headers) as socket:
        await receive(socket)
        assert [(await receive(socket))["sequence"] for _ in range(4)] == list(
            range(end - 2, end + 2)
        )
    # A tool that wants everything asks for it.
    async with me.client.websocket(path(me, after=0, replay="all"), headers=me.headers) as socket:
        await receive(socket)
        got = [(await receive(socket))["sequence"] for _ in range(end + 1)]
        assert got == list(range(1, end + 2))


@pytest.mark.parametrize(
    ("who", "args", "code"),
    [
        ("nobody", {}, "not_signed_in"),
        ("stranger", {}, "workspace_not_found"),
        ("owner", {"after": "x"}, "invalid_sequence"),
        ("owner", {"replay": "some"}, "invalid_replay"),
    ],
)
async def test_refused_sockets_say_why(app: Quart, sign_up, who, args, code) -> None:  # type: ignore[no-untyped-def]
    owner: Person = await sign_up()
    stranger: Person = await sign_up()
    headers = {"nobody": {}, "stranger": stranger.headers, "owner": owner.headers}[who]
    async with app.test_client().websocket(path(owner, **args), headers=headers) as socket:
        error = await receive(socket)
        assert error["type"] == "error" and error["payload"]["code"] == code
        with pytest.raises(WebsocketDisconnectError):
            await asyncio.wait_for(socket.receive(), timeout=10)


async def test_a_cookie_from_another_site_is_refused(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    browser = app.test_client()
    await browser.post("/api/v1/auth/login", json={"email": me.email, "password": PASSWORD})
    async with browser.websocket(path(me), headers={"Origin": "https://evil.example"}) as socket:
        error = await receive(socket)
        assert error["payload"]["code"] == "cross_site_request"


async def test_a_slow_client_still_gets_every_event_once(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    from hub.core.log.bus import DEFAULT_BUS

    me: Person = await sign_up()
    size = DEFAULT_BUS.queue_size
    DEFAULT_BUS.queue_size = 2
    try:
        async with me.client.websocket(path(me), headers=me.headers) as socket:
            await receive(socket)
            for n in range(30):  # the socket's bus queue overflows: it is dropped and resyncs
                await note(me, n)
            got = [(await receive(socket))["sequence"] for _ in range(30)]
            assert got == list(range(1, 31))
    finally:
        DEFAULT_BUS.queue_size = size


async def test_streaming_text_from_the_gateway_is_forwarded_live(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    from hub.protocol.lap import Envelope, MessageDelta
    from plugins.lap_gateway.uplink import publish_delta
    from tests.core.scenario import make_agent

    me: Person = await sign_up()
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    async with me.client.websocket(path(me, after=me.log_start), headers=me.headers) as socket:
        await receive(socket)
        envelope = Envelope(id="evt_delta_1", type="message.delta")
        publish_delta(agent, envelope, MessageDelta(message_id="msg_1", delta="Hel"))
        await note(me, 1)
        delta, logged = await receive(socket), await receive(socket)
        assert delta["type"] == "message.delta" and delta["payload"]["delta"] == "Hel"
        assert delta["sequence"] == 0 and delta["actor"] == f"agent:{agent.id}"
        assert logged["sequence"] == me.log_start + 1


async def test_a_revoked_token_cannot_act_and_its_socket_closes(app: Quart, sign_up) -> None:  # type: ignore[no-untyped-def]
    me: Person = await sign_up()
    agent = await make_agent(await Workspace.get(id=me.workspace_id))
    async with me.client.websocket(path(me, after=me.log_start), headers=me.headers) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        await ApiToken.filter(user_id=me.user_id).update(revoked_at=utcnow())
        payload = {"title": "after revocation", "targetAgentId": agent.id}
        command = {"type": "task.create", "payload": payload}
        await socket.send(json.dumps({"id": "evt_after_revocation", **command}))
        error = await receive(socket)
        assert error["type"] == "error" and error["payload"]["code"] == "invalid_token"
        with pytest.raises(WebsocketDisconnectError):
            await asyncio.wait_for(socket.receive(), timeout=10)
    assert not await Task.filter(workspace_id=me.workspace_id, title="after revocation").exists()


async def test_a_quiet_socket_closes_once_its_person_leaves_the_workspace(
    app: Quart,
    sign_up,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_socket, "RECHECK_S", 0.05)
    me: Person = await sign_up()
    async with me.client.websocket(path(me, after=me.log_start), headers=me.headers) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        await Membership.filter(user_id=me.user_id, workspace_id=me.workspace_id).delete()
        error = await receive(socket)  # the client sent nothing
        assert error["type"] == "error" and error["payload"]["code"] == "workspace_not_found"
        with pytest.raises(WebsocketDisconnectError):
            await asyncio.wait_for(socket.receive(), timeout=10)


async def test_a_recheck_that_meets_a_database_outage_keeps_the_socket(
    app: Quart,
    sign_up,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The database away for a moment is no reason to drop every browser: the look is
    taken again at the next frame or period."""
    monkeypatch.setattr(client_socket, "RECHECK_S", 0.05)
    looks = 0

    async def away() -> object:
        nonlocal looks
        looks += 1
        raise DBConnectionError("connection refused")

    monkeypatch.setattr(client_socket, "caller_again", away)
    me: Person = await sign_up()
    async with me.client.websocket(path(me, after=me.log_start), headers=me.headers) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        await eventually(lambda: looks >= 3, within=10)
        sequence = await note(me, 1)
        assert (await receive(socket))["sequence"] == sequence


async def test_a_disabled_persons_open_socket_closes(
    app: Quart,
    sign_up,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hub.core.people.operator import set_disabled
    from hub.core.store.models import User

    monkeypatch.setattr(client_socket, "RECHECK_S", 0.05)
    await sign_up("admin")  # the hub's first account, its admin: the one kept enabled
    me: Person = await sign_up()
    async with me.client.websocket(path(me, after=me.log_start), headers=me.headers) as socket:
        assert (await receive(socket))["type"] == "client.welcome"
        await set_disabled(await User.get(id=me.user_id), True)
        error = await receive(socket)
        assert error["type"] == "error" and error["payload"]["code"] == "invalid_token"
        with pytest.raises(WebsocketDisconnectError):
            await asyncio.wait_for(socket.receive(), timeout=10)
