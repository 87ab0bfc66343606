"""Approval policies end to end: a real hub process, an SDK agent on the LAP socket, people
answering on the web's own forms over HTTP and in Telegram (a local Bot API server), and
every step read back from the audit API.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_user
from hub.core.store.models import Interaction, Membership, Role, User
from hub.protocol.clock import utcnow
from hub.protocol.interactions import ApprovalPolicy
from hub.sdk import Agent, Backoff, HubRefused, Resolution
from hub.testing import eventually
from tests.channels.peers import BotApiPeer, SentMessage
from tests.sdk.live import LiveHub, live_hub

PASSWORD = "correct horse"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
BO_TELEGRAM = 5151
ADA_TELEGRAM = 6161


@pytest.fixture
async def hub(db: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[LiveHub]:
    env = {"LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token, "LINEUP_TELEGRAM_API_URL": bot_api.url}
    async with live_hub(db, tmp_path / "hub", **env) as running:
        yield running


async def member(hub: LiveHub, name: str) -> User:
    user, _ = await create_user(f"{name}@example.com", PASSWORD, name.capitalize())
    await Membership.create(
        id=new_id("membership"), workspace_id=hub.workspace_id, user=user, role=Role.MEMBER
    )
    return user


@pytest.fixture
async def browsers() -> AsyncIterator[list[httpx.AsyncClient]]:
    """Every browser a test opens, closed when it ends, passed or failed."""
    opened: list[httpx.AsyncClient] = []
    yield opened
    for http in opened:
        await http.aclose()


@dataclass
class WebPerson:
    """A person in a browser: the hub's own pages and forms, over a real socket."""

    hub: LiveHub
    http: httpx.AsyncClient

    @classmethod
    async def signed_in(
        cls, hub: LiveHub, user: User, browsers: list[httpx.AsyncClient]
    ) -> WebPerson:
        http = httpx.AsyncClient(base_url=hub.url, timeout=30)
        browsers.append(http)
        page = await http.get("/login")
        signed = await http.post(
            "/login",
            data={"email": user.email, "password": PASSWORD, "csrf_token": _csrf(page.text)},
        )
        assert signed.status_code in (302, 303), signed.text
        return cls(hub, http)

    def card_path(self, interaction_id: str) -> str:
        return f"/w/{self.hub.workspace_id}/interactions/{interaction_id}"

    async def card(self, interaction_id: str) -> str:
        page = await self.http.get(self.card_path(interaction_id))
        assert page.status_code == 200, page.text
        return page.text

    async def answer(self, interaction_id: str, option_id: str) -> httpx.Response:
        page = await self.card(interaction_id)
        form = {"optionId": option_id, "csrf_token": _csrf(page), "next": "/"}
        return await self.http.post(self.card_path(interaction_id) + "/respond", data=form)


def _csrf(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "no form token on the page"
    return match.group(1)


@pytest.fixture
async def agent(hub: LiveHub, tmp_path: Path) -> AsyncIterator[Agent]:
    sdk = Agent(
        hub.url,
        state_dir=tmp_path / "agent",
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        pairing_code=await hub.pairing_code(),
        name="deployer",
    )
    async with sdk:
        assert sdk.agent_id is not None
        await hub.confirm(sdk.agent_id, "deployer")
        yield sdk


async def pending_card(hub: LiveHub) -> Interaction:
    return await eventually(
        lambda: Interaction.filter(workspace_id=hub.workspace_id, status="pending").first()
    )


async def audit_types(hub: LiveHub) -> list[str]:
    """The audited steps of the work, without the people's sign-ins and tokens."""
    trail = await hub.api("GET", "/audit?after=0&limit=200")
    return [e["type"] for e in trail["entries"] if not e["type"].startswith("account.")]


async def link_telegram(bot_api: BotApiPeer, user: User, telegram_id: int) -> None:
    token, _ = await create_link_token(user.id, "telegram")
    bot_api.send_text(telegram_id, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(telegram_id)))


async def test_two_of_three_named_approvers_decide_on_the_web(
    hub: LiveHub, agent: Agent, browsers: list[httpx.AsyncClient]
) -> None:
    ada, bo, cy, dan = [await member(hub, name) for name in ("ada", "bo", "cy", "dan")]
    policy = ApprovalPolicy(mode="quorum", required=2, approvers=[ada.email, bo.email, cy.email])
    asking = asyncio.create_task(agent.request_approval("Drop the old table?", policy=policy))
    card = await pending_card(hub)
    web = {p.id: await WebPerson.signed_in(hub, p, browsers) for p in (ada, bo, dan)}

    page = await web[ada.id].card(card.id)
    assert "Needs 2 of 3 approvals: Ada, Bo, Cy." in page
    assert "0 of 2 approvals so far." in page

    assert "Only the approvers named above may answer this card." in await web[dan.id].card(card.id)
    refused = await web[dan.id].answer(card.id, "approve")  # the form's absence is no guard
    assert refused.status_code == 403 and "not_an_approver" in refused.text

    voted = await web[ada.id].answer(card.id, "approve")
    assert voted.status_code in (302, 303)
    page = await web[ada.id].card(card.id)
    assert "1 of 2 approvals so far." in page and "You voted: Approve." in page
    assert not asking.done()  # one vote of two: the agent hears nothing yet

    decided = await web[bo.id].answer(card.id, "approve")
    assert decided.status_code in (302, 303)
    resolution: Resolution = await asyncio.wait_for(asking, timeout=30)
    assert resolution.approved and resolution.responded_by == f"user:{bo.id}"
    assert [v["actor"] for v in resolution.votes] == [f"user:{ada.id}", f"user:{bo.id}"]
    assert await audit_types(hub) == [
        "agent.paired",
        "agent.confirmed",
        "interaction.voted",
        "interaction.voted",
        "interaction.resolved",
    ]


async def test_one_approval_on_the_web_and_one_in_telegram(
    hub: LiveHub, agent: Agent, bot_api: BotApiPeer, browsers: list[httpx.AsyncClient]
) -> None:
    ada, bo = await member(hub, "ada"), await member(hub, "bo")
    await link_telegram(bot_api, bo, BO_TELEGRAM)
    policy = ApprovalPolicy(mode="quorum", required=2, approvers=[ada.email, bo.email])
    asking = asyncio.create_task(agent.request_approval("Rotate the keys?", policy=policy))
    card = await pending_card(hub)

    message: SentMessage = await eventually(
        lambda: next((m for m in bot_api.chat(BO_TELEGRAM) if "Rotate the keys?" in m.text), None)
    )
    assert "Needs 2 of 2 approvals: Ada, Bo." in message.text
    assert "0 of 2 approvals so far." in message.text

    web = await WebPerson.signed_in(hub, ada, browsers)
    assert (await web.answer(card.id, "approve")).status_code in (302, 303)
    # Ada's vote reaches Bo's copy: the new count, and his buttons stay.
    await eventually(lambda: "1 of 2 approvals so far." in message.text)
    assert "· Ada: Approve (via the web)" in message.text
    query = bot_api.press(BO_TELEGRAM, message, message.button("✅ Approve")["callback_data"])
    told = await eventually(lambda: bot_api.answers.get(query))
    assert told["text"].startswith("Thank you"), told

    resolution: Resolution = await asyncio.wait_for(asking, timeout=30)
    assert resolution.approved and resolution.via == "telegram"
    assert [v["via"] for v in resolution.votes] == ["web", "telegram"]
    edited = bot_api.messages[(BO_TELEGRAM, message.message_id)]
    assert "Approve — by Bo via Telegram" in edited.text and not edited.buttons()
    assert (await audit_types(hub))[-3:] == [
        "interaction.voted",
        "interaction.voted",
        "interaction.resolved",
    ]


async def test_a_workspace_rule_gives_high_risk_cards_a_quorum(
    hub: LiveHub, agent: Agent, browsers: list[httpx.AsyncClient]
) -> None:
    ada, bo = await member(hub, "ada"), await member(hub, "bo")
    created = await hub.api(
        "POST",
        "/policy-rules",
        {
            "risk": "high",
            "policy": {"mode": "quorum", "required": 2, "approvers": [ada.email, bo.email]},
        },
    )
    assert created["match"]["risk"] == "high"
    asking = asyncio.create_task(agent.request_approval("Restart production?", risk="high"))
    card = await pending_card(hub)
    detail = await hub.api("GET", f"/interactions/{card.id}")
    assert detail["policy"]["mode"] == "quorum" and detail["policy"]["approvers"] == [ada.id, bo.id]

    web = await WebPerson.signed_in(hub, ada, browsers)
    # High risk keeps its second step on the web: the confirmation comes with the vote.
    page = await web.card(card.id)
    form = {"optionId": "approve", "confirm": "approve", "csrf_token": _csrf(page), "next": "/"}
    voted = await web.http.post(web.card_path(card.id) + "/respond", data=form)
    assert voted.status_code in (302, 303)
    assert (await hub.api("GET", f"/interactions/{card.id}"))["status"] == "pending"
    assert not asking.done()
    asking.cancel()


async def test_reminder_then_escalation_then_denial_of_a_high_risk_card(
    hub: LiveHub, agent: Agent, bot_api: BotApiPeer
) -> None:
    ada, bo = await member(hub, "ada"), await member(hub, "bo")
    await link_telegram(bot_api, ada, ADA_TELEGRAM)
    policy = ApprovalPolicy(
        approvers=[ada.email], remind_after_s=1, escalate_after_s=3, escalate_to=[bo.email]
    )
    expires = utcnow() + timedelta(seconds=5)
    asking = asyncio.create_task(
        agent.request_approval(
            "Delete the backups?", risk="high", policy=policy, expires_at=expires
        )
    )
    card: SentMessage = await eventually(
        lambda: next(
            (m for m in bot_api.chat(ADA_TELEGRAM) if "Delete the backups?" in m.text), None
        )
    )
    assert "If nobody decides in time, it is denied." in card.text
    # The card is in Ada's chat already: the reminder replies to it there.
    await eventually(
        lambda: any("Reminder" in m.text for m in bot_api.chat(ADA_TELEGRAM)), within=30
    )
    resolution: Resolution = await asyncio.wait_for(asking, timeout=60)
    assert resolution.option_id == "reject" and not resolution.approved
    assert (resolution.responded_by, resolution.via) == ("hub:policy", "policy")
    trail = (await hub.api("GET", "/audit?after=0&limit=200"))["entries"]
    steps = [e for e in trail if e["type"].startswith("interaction.")]
    assert [e["type"] for e in steps] == [
        "interaction.reminded",
        "interaction.escalated",
        "interaction.resolved",
    ]
    assert steps[0]["to"] == [ada.id] and steps[1]["escalateTo"] == [bo.id]
    assert steps[2]["reason"] == "expired" and steps[2]["decision"] == {"optionId": "reject"}
    assert all(step["actor"] == "hub:policy" for step in steps)


async def test_any_of_resolves_on_the_first_approval(
    hub: LiveHub, agent: Agent, browsers: list[httpx.AsyncClient]
) -> None:
    ada, bo = await member(hub, "ada"), await member(hub, "bo")
    policy = ApprovalPolicy(approvers=[ada.email, bo.email])
    asking = asyncio.create_task(agent.request_approval("Publish the release?", policy=policy))
    card = await pending_card(hub)
    web = await WebPerson.signed_in(hub, bo, browsers)
    assert "Any one of Ada, Bo decides." in await web.card(card.id)
    assert (await web.answer(card.id, "approve")).status_code in (302, 303)
    resolution: Resolution = await asyncio.wait_for(asking, timeout=30)
    assert resolution.approved and resolution.responded_by == f"user:{bo.id}"
    assert resolution.votes == []


async def test_a_card_that_expires_undecided_tells_the_agent(hub: LiveHub, agent: Agent) -> None:
    ada = await member(hub, "ada")
    # Not high risk and no expiry default: the card just expires, and the agent must hear it
    # rather than wait for an answer that can no longer come.
    policy = ApprovalPolicy(approvers=[ada.email])
    expires = utcnow() + timedelta(seconds=2)
    asking = asyncio.create_task(
        agent.request_approval("Rotate the keys?", policy=policy, expires_at=expires)
    )
    resolution: Resolution = await asyncio.wait_for(asking, timeout=60)
    assert resolution.expired and not resolution.approved and resolution.option_id is None
    card = await Interaction.get(id=resolution.interaction_id)
    assert card.status == "expired"
    steps = (await hub.api("GET", "/audit?after=0&limit=200"))["entries"]
    assert [e["type"] for e in steps if e["type"].startswith("interaction.")] == [
        "interaction.expired"
    ]


async def test_an_sdk_agent_cannot_make_a_high_risk_card_approve_itself(
    hub: LiveHub, agent: Agent
) -> None:
    policy = ApprovalPolicy(on_expiry="approve")
    expires = utcnow() + timedelta(hours=1)
    with pytest.raises(HubRefused) as refused:
        await asyncio.wait_for(
            agent.request_approval(
                "Wipe the cache cluster?", risk="high", policy=policy, expires_at=expires
            ),
            timeout=30,
        )
    assert refused.value.code == "expiry_approval_not_allowed" and refused.value.hint
    assert not await Interaction.filter(workspace_id=hub.workspace_id).exists()
