"""A sensitive answer reaches the agent that asked, and no one else.

Over real sockets against ``lineup serve``: an SDK agent asks for a token on an input card
marked ``sensitive``; a person answers it. The asking agent gets the text, live and when it
replays its downlink from the start. No person — the owner who typed it, another member,
a viewer — reads it on any surface: the events API, ``/ws/client`` (live and replayed), the
interaction and task APIs, the answer's own reply, a second answer's refusal, the audit
trail, or the pages (the task with its raw events, the card, the inbox, the agent's
diagnostics). Nor does another agent of the workspace. Each person still sees that the card
was answered, by whom and when.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from hub.core.ids import new_id
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Interaction, Membership, Role, User
from hub.protocol.interactions import InputSpec, InteractionCard, InteractionType
from hub.sdk import Agent, Backoff, Downlink, Resolution
from hub.testing import eventually
from tests.plugins.lap_client import raw_agent
from tests.sdk.live import LiveHub, live_hub

SECRET = "tok-4f9c1e77d2b84a5e9e31"  # the value typed; it must appear nowhere a person looks
PASSWORD = "correct horse"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


@pytest.fixture
async def clients() -> AsyncIterator[list[httpx.AsyncClient]]:
    """Every HTTP client a test opens, closed when it ends, passed or failed."""
    opened: list[httpx.AsyncClient] = []
    yield opened
    for client in opened:
        await client.aclose()


async def person(hub: LiveHub, name: str, role: Role) -> tuple[User, str]:
    """A member of the hub's workspace with ``role``, and an API token of theirs."""
    user, _ = await create_user(f"{name}@example.com", PASSWORD, name.capitalize())
    await Membership.create(
        id=new_id("membership"), workspace_id=hub.workspace_id, user=user, role=role
    )
    _, token = await create_api_token(user, "tests")
    return user, token


def api_client(hub: LiveHub, token: str, clients: list[httpx.AsyncClient]) -> httpx.AsyncClient:
    client = httpx.AsyncClient(
        base_url=f"{hub.url}/api/v1/workspaces/{hub.workspace_id}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    clients.append(client)
    return client


async def browser(hub: LiveHub, email: str, clients: list[httpx.AsyncClient]) -> httpx.AsyncClient:
    """A signed-in browser session on the hub's own pages."""
    http = httpx.AsyncClient(base_url=hub.url, timeout=30)
    clients.append(http)
    page = await http.get("/login")
    match = _CSRF.search(page.text)
    assert match, "no form token on the sign-in page"
    signed = await http.post(
        "/login", data={"email": email, "password": PASSWORD, "csrf_token": match.group(1)}
    )
    assert signed.status_code in (302, 303), signed.text
    return http


def sdk_agent(hub: LiveHub, state_dir: Path, code: str, name: str) -> Agent:
    return Agent(
        hub.url,
        state_dir=state_dir,
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        pairing_code=code,
        name=name,
    )


def client_socket_url(hub: LiveHub, after: int = 0) -> str:
    base = hub.url.replace("http://", "ws://", 1)
    return f"{base}/ws/client?workspace={hub.workspace_id}&after={after}"


async def frames_until_resolved(socket: Any) -> list[str]:
    """The socket's frames, as sent, up to and including the card's ``interaction.resolved``."""
    seen: list[str] = []
    async with asyncio.timeout(30):
        while True:
            raw = await socket.recv()
            seen.append(raw)
            if json.loads(raw)["type"] == "interaction.resolved":
                return seen


def resolved_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "interaction.resolved"]


async def test_only_the_asking_agent_reads_a_sensitive_answer(
    hub: LiveHub, tmp_path: Path, clients: list[httpx.AsyncClient]
) -> None:
    owner = await User.get(id=hub.user_id)
    bo, bo_token = await person(hub, "bo", Role.MEMBER)
    vi, vi_token = await person(hub, "vi", Role.VIEWER)
    _, owner_token = await create_api_token(owner, "sockets")
    people = {"owner": owner_token, "member": bo_token, "viewer": vi_token}
    apis = {who: api_client(hub, token, clients) for who, token in people.items()}

    bystander_heard: list[Downlink] = []
    bystander = sdk_agent(hub, tmp_path / "bystander", await hub.pairing_code(), "bystander")
    bystander.on("interaction.resolved")(lambda d: _heard(bystander_heard, d))
    bystander.on("task.assigned")(lambda d: _heard(bystander_heard, d))
    asker = sdk_agent(hub, tmp_path / "asker", await hub.pairing_code(), "asker")

    async with bystander, asker:
        assert asker.agent_id and bystander.agent_id
        await hub.confirm(asker.agent_id, "asker")
        await hub.confirm(bystander.agent_id, "bystander")
        task = await asker.create_task("Publish the package")
        await task.accept()
        card = InteractionCard(
            type=InteractionType.INPUT,
            title="Registry token",
            description="The token to publish with.",
            input=InputSpec(sensitive=True),
        )
        live_sockets = [
            await connect(
                client_socket_url(hub),
                additional_headers={"Authorization": f"Bearer {token}"},
                proxy=None,
            )
            for token in people.values()
        ]
        try:
            asking = asyncio.create_task(task.request_interaction(card))
            pending = await eventually(
                lambda: Interaction.filter(workspace_id=hub.workspace_id, status="pending").first()
            )
            # The viewer may not answer; the owner answers through the API.
            refused = await apis["viewer"].post(
                f"/interactions/{pending.id}/respond", json={"text": SECRET}
            )
            assert refused.status_code == 403
            answered = await apis["owner"].post(
                f"/interactions/{pending.id}/respond", json={"text": SECRET}
            )
            assert answered.status_code == 200, answered.text
            resolution: Resolution = await asyncio.wait_for(asking, timeout=30)
            live = [await frames_until_resolved(socket) for socket in live_sockets]
        finally:
            for socket in live_sockets:
                await socket.close()

        # The agent that asked has the text.
        assert resolution.text == SECRET
        assert resolution.responded_by == f"user:{owner.id}"

        seen: dict[str, str] = {"answer's reply": answered.text}
        answers: list[dict[str, Any]] = []  # the answer as each person was shown it
        # Someone answering second is told who decided, not what they typed.
        second = await apis["member"].post(
            f"/interactions/{pending.id}/respond", json={"text": "mine"}
        )
        assert second.status_code == 409, second.text
        seen["second answer's refusal"] = second.text
        for who, frames in zip(people, live, strict=True):
            seen[f"{who}'s live /ws/client"] = "\n".join(frames)
            answers += [e["payload"] for e in resolved_events([json.loads(f) for f in frames])]
        for who, token in people.items():
            async with connect(
                client_socket_url(hub),
                additional_headers={"Authorization": f"Bearer {token}"},
                proxy=None,
            ) as socket:
                seen[f"{who}'s replayed /ws/client"] = "\n".join(
                    await frames_until_resolved(socket)
                )
            api = apis[who]
            events = await api.get("/events?after=0")
            assert events.status_code == 200
            seen[f"{who}'s events API"] = events.text
            answers += [e["payload"] for e in resolved_events(events.json()["events"])]
            detail = await api.get(f"/interactions/{pending.id}")
            seen[f"{who}'s interaction API"] = detail.text
            shown = detail.json()
            assert shown["status"] == "resolved" and shown["respondedByName"] == "Owner"
            assert shown["respondedAt"]
            answers.append(shown)
            task_detail = await api.get(f"/tasks/{task.id}")
            seen[f"{who}'s task API"] = task_detail.text
            assert resolved_events(task_detail.json()["timeline"])
            seen[f"{who}'s inbox API"] = (await api.get("/inbox")).text
            audit = await api.get("/audit?after=0&limit=200")
            seen[f"{who}'s audit API"] = audit.text
            assert "interaction.resolved" in [e["type"] for e in audit.json()["entries"]]

        for who, email in (("owner", owner.email), ("member", bo.email), ("viewer", vi.email)):
            web = await browser(hub, email, clients)
            ws = hub.workspace_id
            for page in (
                f"/w/{ws}/tasks/{task.id}",
                f"/w/{ws}/interactions/{pending.id}",
                f"/w/{ws}/inbox",
                f"/w/{ws}/agents/{asker.agent_id}",
                f"/w/{ws}/tasks",
            ):
                shown_page = await web.get(page)
                assert shown_page.status_code == 200, (page, shown_page.text[:300])
                seen[f"{who}'s page {page}"] = shown_page.text
            assert "interaction.resolved" in seen[f"{who}'s page /w/{ws}/tasks/{task.id}"]

        leaks = [where for where, text in seen.items() if SECRET in text]
        assert leaks == [], f"the sensitive answer shows in: {leaks}"
        # What each was shown instead: that it was answered, by whom, via what.
        assert len(answers) == 3 * len(people)
        for answer in answers:
            assert answer["response"] == {"hidden": True}
            assert answer["respondedBy"] == f"user:{owner.id}" and answer["via"] == "api"

        # Another agent of the workspace never hears of the answer: a task assigned to it
        # after the answer arrives, and the answer (earlier in the log) did not come first.
        marker = await hub.task(bystander.agent_id, "Something else")
        await eventually(lambda: any(d.type == "task.assigned" for d in bystander_heard))
        assert [d.type for d in bystander_heard] == ["task.assigned"]
        assert bystander_heard[0].payload["task"]["id"] == marker
        for stored in (tmp_path / "bystander").rglob("*"):
            if stored.is_file():
                assert SECRET not in stored.read_text(errors="replace")
        credential = asker.credential()
        assert credential is not None

    # The asking agent replays its downlink from the start: the text is there again.
    async with raw_agent(hub.url, credential) as (replaying, _):
        await replaying.hello(runtime="test", lastSequence=0)
        async with asyncio.timeout(30):
            while True:
                frame = await replaying.downlink(within=30)
                if frame["type"] == "interaction.resolved":
                    break
    assert frame["payload"]["interactionId"] == pending.id
    assert frame["payload"]["response"] == {"text": SECRET}


async def _heard(into: list[Downlink], downlink: Downlink) -> None:
    into.append(downlink)
