"""Feishu end to end: a hub process, a local Feishu platform, agents over real sockets.

``lineup serve`` runs with the Feishu channel pointed at ``FeishuPeer``: lark-oapi's API
client fetches tenant tokens and sends and redraws cards there, and its long-connection
client holds the peer's protobuf-framed WebSocket, through which the peer delivers presses
and messages as Feishu does. The callback address (``POST /feishu/card``) is exercised with
the app's encrypt key set, as a public deployment would run it.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_user
from hub.core.store.models import (
    Agent,
    Event,
    Interaction,
    InteractionStatus,
    Membership,
    Role,
    Task,
)
from hub.protocol.interactions import InteractionCard
from hub.sdk import Agent as SdkAgent
from hub.sdk import Resolution
from tests.channels.conftest import eventually, feishu_chat
from tests.channels.feishu_peer import ENCRYPT_KEY, FeishuMessage, FeishuPeer
from tests.channels.peers import SmtpPeer
from tests.channels.test_feishu import feishu_card
from tests.sdk.live import LiveHub, live_hub

ADA = "ou_ada"  # the owner's Feishu account
MALLORY = "ou_mallory"  # someone else in the same Feishu tenant


@pytest.fixture
async def feishu_encrypted() -> AsyncIterator[FeishuPeer]:
    from tests.channels.feishu_peer import FeishuPeer

    peer = FeishuPeer(encrypt_key=ENCRYPT_KEY)
    await peer.start()
    yield peer
    await peer.stop()


@pytest.fixture
async def hub(
    db: str, tmp_path: Path, smtp: SmtpPeer, feishu_encrypted: FeishuPeer
) -> AsyncIterator[LiveHub]:
    feishu = feishu_encrypted
    env = feishu.hub_env(LINEUP_SMTP_URL=smtp.url)
    async with live_hub(db, tmp_path / "hub", **env) as running:
        await eventually(lambda: feishu.connected > 0)  # the long connection is up
        yield running


async def link(hub: LiveHub, feishu: FeishuPeer, open_id: str = ADA) -> None:
    token, _ = await create_link_token(hub.user_id, "feishu")
    await feishu.send_text(open_id, feishu_chat(open_id), token)
    await eventually(lambda: any("Linked" in m.text for m in feishu.chat(feishu_chat(open_id))))


@pytest.fixture
def demo_agent(tmp_path: Path) -> Iterator[Callable[[str, str], None]]:
    """Starts ``lineup agent demo`` as its own process; always stopped at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(hub_url: str, pairing_code: str) -> None:
        with open(tmp_path / "demo.log", "wb") as log:
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "hub.cli", "agent", "demo", "--hub", hub_url,
                     "--pair", pairing_code, "--pause", "0"],
                    env={**os.environ, "LINEUP_AGENT_HOME": str(tmp_path / "agent-home")},
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )
            )  # fmt: skip

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


async def test_approve_a_production_change_from_feishu(
    hub: LiveHub,
    smtp: SmtpPeer,
    feishu_encrypted: FeishuPeer,
    demo_agent: Callable[[str, str], None],
) -> None:
    feishu = feishu_encrypted
    await link(hub, feishu)
    demo_agent(hub.url, await hub.pairing_code())
    agent = await eventually(lambda: Agent.filter(workspace_id=hub.workspace_id).first())
    await hub.confirm(agent.id, "Demo agent")
    task_id = await hub.task(agent.id, "Upgrade the production dependencies")

    # The person's phone: a card with the context, the exact action and its editable list.
    interaction = await eventually(
        lambda: Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING).first()
    )
    card = await feishu_card(feishu, ADA, interaction.payload["title"])
    stale = feishu.press_event(ADA, card, card.button("Reject"))  # pressed once it is decided
    assert "⛔ High risk" in card.texts() and interaction.payload["impact"] in card.texts()
    assert card.card["header"]["template"] == "red"  # and in colour, never by colour alone
    assert card.labels() == ["✅ Approve", "✖️ Reject"]
    [packages] = [c for c in card.controls() if c["tag"] == "input"]
    assert packages["default_value"].splitlines()[-1] == "uvicorn 0.30 → 0.32"

    # Drop uvicorn from the list, approve: high risk, so a second, deliberate press.
    edited = {packages["name"]: "httpx 0.27 → 0.28\npydantic 2.9 → 2.10"}
    first = await feishu.press(ADA, card, "Approve", form=edited)
    assert first["toast"]["content"] == "Tap again to confirm."
    assert (await Interaction.get(id=interaction.id)).status == InteractionStatus.PENDING
    assert card.labels() == ["✅ Yes: Approve", "↩️ Cancel"]
    recorded = await feishu.press(ADA, card, "Yes")
    assert recorded["toast"]["content"].startswith("Thank you")
    assert card.controls() == [] and "Approve — by Owner via Feishu" in card.text

    # The agent continues with exactly what was approved: the result and artifact on the web.
    await eventually(lambda: Task.filter(id=task_id, status="succeeded").exists(), within=60)
    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert len(detail["artifacts"]) == 1 and "(approved via feishu (edited)" in detail["summary"]
    assert "uvicorn" not in detail["summary"]
    decided = await hub.api("GET", f"/interactions/{interaction.id}")
    assert (decided["via"], decided["respondedByName"]) == ("feishu", "Owner")

    # Every other surface is read-only: the API refuses, the email's link page shows who.
    late = await hub.http.post(
        f"/api/v1/workspaces/{hub.workspace_id}/interactions/{interaction.id}/respond",
        json={"optionId": "reject"},
    )
    assert late.status_code == 409 and late.json()["error"]["details"]["via"] == "feishu"
    title = interaction.payload["title"]
    mail = next(m for m in smtp.to("owner@example.com") if title in str(m["Subject"]))
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    reject = re.search(r"- Reject: (\S+)", plain.get_content()).group(1)  # type: ignore[union-attr]
    page = await hub.http.get(reject)
    assert page.status_code == 200 and "Approve — by Owner via Feishu" in page.text
    # And a press on the card from before the decision changes nothing either.
    answered = await feishu.deliver_press(card, stale)
    assert answered["toast"]["content"].startswith("Already decided by Owner via Feishu")
    assert card.controls() == [] and (await hub.api("GET", f"/tasks/{task_id}"))["status"] == (
        "succeeded"
    )


KINDS: dict[str, dict[str, Any]] = {
    "approval": {"type": "approval", "title": "Restart the queue?", "risk": "low"},
    "choice": {
        "type": "choice",
        "title": "Which region?",
        "options": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "United States"}],
    },
    "multi": {
        "type": "choice",
        "title": "Which checks?",
        "multiple": True,
        "minSelections": 1,
        "options": [
            {"id": "lint", "label": "Lint"},
            {"id": "unit", "label": "Unit tests"},
            {"id": "e2e", "label": "End to end"},
        ],
    },
    "input": {"type": "input", "title": "Contact address?", "input": {"format": "email"}},
    "secret": {
        "type": "input",
        "title": "Deploy key?",
        "input": {"format": "text", "sensitive": True},
    },
    "review": {"type": "review", "title": "Review the plan", "content": "1. Back up\n2. Migrate"},
}


async def test_each_card_kind_is_answered_natively_and_reaches_the_agent(
    hub: LiveHub, feishu_encrypted: FeishuPeer, tmp_path: Path
) -> None:
    feishu = feishu_encrypted
    await link(hub, feishu)
    async with hub.agent(tmp_path / "agent", "asker") as agent:
        asked = {
            kind: asyncio.create_task(
                agent.request_interaction(InteractionCard.model_validate(card))
            )
            for kind, card in KINDS.items()
        }
        cards = {kind: await feishu_card(feishu, ADA, KINDS[kind]["title"]) for kind in KINDS}

        assert cards["approval"].labels() == ["✅ Approve", "✖️ Reject"]
        await feishu.press(ADA, cards["approval"], "Approve")

        await feishu.press(ADA, cards["choice"], "United States")

        [select] = [c for c in cards["multi"].controls() if c["tag"] == "multi_select_static"]
        assert [o["text"]["content"] for o in select["options"]] == [
            "Lint",
            "Unit tests",
            "End to end",
        ]
        none = await feishu.press(ADA, cards["multi"], "Submit", form={"choices": []})
        assert none["toast"]["type"] == "error" and not asked["multi"].done()
        await feishu.press(ADA, cards["multi"], "Submit", form={"choices": ["0", "2"]})

        wrong = await feishu.press(ADA, cards["input"], "Send", form={"text": "not an address"})
        assert "email address" in wrong["toast"]["content"] and "card" not in wrong
        await feishu.press(ADA, cards["input"], "Send", form={"text": "ops@example.com"})

        [secret] = [c for c in cards["secret"].controls() if c["tag"] == "input"]
        assert secret["input_type"] == "password"
        await feishu.press(ADA, cards["secret"], "Send", form={"text": "hunter2-key"})

        bare = await feishu.press(ADA, cards["review"], "Request changes", form={"comment": ""})
        assert bare["toast"]["type"] == "error" and not asked["review"].done()
        await feishu.press(
            ADA, cards["review"], "Request changes", form={"comment": "Add a rollback step"}
        )

        answers: dict[str, Resolution] = {
            kind: await asyncio.wait_for(waiting, 30) for kind, waiting in asked.items()
        }
    assert {kind: a.via for kind, a in answers.items()} == dict.fromkeys(KINDS, "feishu")
    assert answers["approval"].response == {"optionId": "approve"}
    assert answers["choice"].response == {"optionId": "us"}
    assert answers["multi"].response == {"optionIds": ["lint", "e2e"]}
    assert answers["input"].response == {"text": "ops@example.com"}
    assert answers["secret"].response == {"text": "hunter2-key"}
    assert answers["review"].response == {
        "optionId": "request_changes",
        "comment": "Add a rollback step",
    }
    for kind, card in cards.items():
        assert card.controls() == [], kind
        assert "via Feishu" in card.text, kind
    assert "hunter2" not in cards["secret"].text  # a secret is never shown back
    # Every card, every redraw: agent text only ever as plain text.
    for card in feishu.messages.values():
        for shown in [card.content, *card.history]:
            assert not {"lark_md", "markdown"} & FeishuMessage("", "", "", shown).tags()


async def test_strangers_forged_tokens_and_replays_change_nothing(
    hub: LiveHub, feishu_encrypted: FeishuPeer, asker: Asker
) -> None:
    feishu = feishu_encrypted
    await link(hub, feishu)
    interaction_id = await asker.ask("Rotate the keys?")
    card = await feishu_card(feishu, ADA, "Rotate the keys?")
    approve = card.button("Approve")
    drawn = card.content

    # Someone else in the tenant presses: told why, nothing changes.
    stranger = await feishu.press(MALLORY, card, "Approve")
    assert stranger["toast"] == {"type": "error", "content": "This card is for someone else."}
    # A press with a forged verification token, by the long connection.
    forged = feishu.press_event(ADA, card, approve, token="forged-token")
    refused = await feishu.deliver_press(card, forged)
    assert refused["toast"]["type"] == "error" and "card" not in refused

    # By the callback address: forged token, wrong key, bad or stale signature: all 401.
    press = feishu.press_event(ADA, card, approve)
    for how in (
        {"body": feishu.press_event(ADA, card, approve, token="forged-token")},
        {"body": press, "encrypt_key": "not-the-key"},
        {"body": press, "signed_at": 1_000_000_000},  # signed in 2001
        {"body": press, "raw": b'{"header": {"token": "test-verification-token-abc123"}}'},
    ):
        body = how.pop("body")
        response = await feishu.post_callback(hub.url, body, **how)
        assert response.status_code == 401, (how, response.text)
    assert card.content == drawn
    assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING

    # Messages come the same way: a code sent to the bot, posted (encrypted, signed).
    said = await feishu.post_callback(hub.url, feishu.text_event(MALLORY, "oc_mallory", "x" * 32))
    assert said.status_code == 200
    assert "invalid or expired" in feishu.chat("oc_mallory")[-1].text

    # The address check answers its challenge (encrypted, with the token).
    challenge = {
        "challenge": "c-123",
        "token": feishu.verification_token,
        "type": "url_verification",
    }
    answered = await feishu.post_callback(hub.url, challenge)
    assert answered.status_code == 200 and answered.json() == {"challenge": "c-123"}

    # The real press, by HTTP, decides; the same callback again changes nothing.
    decided = await feishu.post_press(hub.url, card, press)
    assert decided.status_code == 200 and decided.json()["toast"]["content"].startswith("Thank")
    replayed = await feishu.post_callback(hub.url, press)
    assert replayed.json()["toast"]["content"] == "This press was already handled."
    resolved = await Interaction.get(id=interaction_id)
    assert (resolved.status, resolved.responded_via) == (InteractionStatus.RESOLVED, "feishu")
    decisions = await Event.filter(workspace_id=hub.workspace_id, type="interaction.resolved")
    assert len(decisions) == 1

    # A replay by the long connection (Feishu's at-least-once redelivery) is the same.
    second_id = await asker.ask("Purge the cache?")
    second = await feishu_card(feishu, ADA, "Purge the cache?")
    once = feishu.press_event(ADA, second, second.button("Reject"))
    await feishu.deliver_press(second, once)
    again = await feishu.deliver_press(second, once)
    assert again["toast"]["content"] == "This press was already handled."
    assert (await Interaction.get(id=second_id)).response == {"optionId": "reject"}


class Asker:
    """An SDK agent that asks for approvals and leaves them waiting (read from the DB)."""

    def __init__(self, agent: SdkAgent) -> None:
        self.agent = agent
        self.waiting: list[asyncio.Task[Resolution]] = []

    async def ask(self, title: str) -> str:
        before = set(await Interaction.all().values_list("id", flat=True))
        self.waiting.append(asyncio.create_task(self.agent.request_approval(title)))
        card = await eventually(
            lambda: (
                Interaction.filter(status=InteractionStatus.PENDING).exclude(id__in=before).first()
            )
        )
        return str(card.id)


@pytest.fixture
async def asker(hub: LiveHub, tmp_path: Path) -> AsyncIterator[Asker]:
    async with hub.agent(tmp_path / "asker", "asker") as agent:
        asking = Asker(agent)
        yield asking
        for waiting in asking.waiting:
            waiting.cancel()
        await asyncio.gather(*asking.waiting, return_exceptions=True)


async def test_an_outage_and_a_frequency_limit_delay_cards_and_lose_none(
    hub: LiveHub, feishu_encrypted: FeishuPeer, asker: Asker
) -> None:
    feishu = feishu_encrypted
    await link(hub, feishu)
    await asker.ask("Card #0")
    await feishu_card(feishu, ADA, "Card #0")

    # Feishu goes away: cards wait in the outbox, retried.
    await feishu.stop()
    for n in (1, 2, 3):
        await asker.ask(f"Card #{n}")

    async def retried() -> bool:
        from hub.core.store.notification_models import Notification, NotificationStatus

        return await Notification.filter(
            surface="feishu", status=NotificationStatus.PENDING, attempts__gte=1
        ).exists()

    await eventually(retried, within=60)
    # It comes back, at first refusing sends for its frequency limit (code 230020, HTTP 400,
    # and the gateway's 429 with its reset): the cards go out after that, each once.
    feishu.refuse_next(1, status=400, code=230020, msg="chat frequency limit", reset_s=1)
    feishu.refuse_next(
        1, status=429, code=99991400, msg="request trigger frequency limit", reset_s=2
    )
    await feishu.start()
    for n in (1, 2, 3):
        await feishu_card(feishu, ADA, f"Card #{n}")
    await eventually(lambda: feishu.connected > 0, within=30)  # the long connection is back
    assert feishu.refused == [230020, 99991400]
    titles = [t for m in feishu.chat(feishu_chat(ADA)) for t in m.texts()[:1]]
    assert sorted(t for t in titles if t.startswith("Card #")) == [f"Card #{n}" for n in range(4)]
    # And presses work again over the re-established long connection.
    card = await feishu_card(feishu, ADA, "Card #3")
    answer = await feishu.press(ADA, card, "Approve")
    assert answer["toast"]["content"].startswith("Thank you")


async def test_a_quorum_and_a_batch_are_answered_in_feishu(
    hub: LiveHub, feishu_encrypted: FeishuPeer, tmp_path: Path
) -> None:
    feishu = feishu_encrypted
    await link(hub, feishu)
    bo, _ = await create_user("bo@example.com", "correct horse", "Bo")
    await Membership.create(
        id=new_id("membership"), workspace_id=hub.workspace_id, user=bo, role=Role.MEMBER
    )
    token, _ = await create_link_token(bo.id, "feishu")
    await feishu.send_text("ou_bo", feishu_chat("ou_bo"), token)
    await eventually(lambda: any("Linked" in m.text for m in feishu.chat(feishu_chat("ou_bo"))))

    async with hub.agent(tmp_path / "agent", "release-bot") as agent:
        # Two of two must approve: each vote counts in both copies.
        policy = {"mode": "quorum", "required": 2, "approvers": ["owner@example.com", bo.email]}
        quorum = asyncio.create_task(
            agent.request_interaction(
                InteractionCard.model_validate(
                    {"type": "approval", "title": "Move the DNS?", "policy": policy}
                )
            )
        )
        mine = await feishu_card(feishu, ADA, "Move the DNS?")
        theirs = await feishu_card(feishu, "ou_bo", "Move the DNS?")
        voted = await feishu.press(ADA, mine, "Approve")
        assert voted["toast"]["content"] == "Your vote is recorded: 1 of 2 approvals."
        await eventually(lambda: "1 of 2 approvals so far." in theirs.texts())
        assert not quorum.done()
        await feishu.press("ou_bo", theirs, "Approve")
        decided = await asyncio.wait_for(quorum, 30)
        assert decided.via == "feishu" and len(decided.response["votes"]) == 2

        # Three approvals of one task, one of them high risk: approved together.
        task = await agent.create_task("Ship the release")
        await task.accept()
        asked = []
        for title, risk in (("Migrate?", "high"), ("Restart?", "low"), ("Purge?", "low")):
            asked.append(asyncio.create_task(task.request_approval(title, risk=risk)))
            await feishu_card(feishu, ADA, title)
        batch = await feishu_card(feishu, ADA, "3 approvals wait in “Ship the release”")
        confirm = await feishu.press(ADA, batch, "Approve all (3)")
        assert confirm["toast"]["content"] == "Tap again to confirm."
        done = await feishu.press(ADA, batch, "Yes, approve all (3)")
        assert done["toast"]["content"] == "Recorded 3 answers."
        answers = [await asyncio.wait_for(waiting, 30) for waiting in asked]
    assert [(a.via, a.response["optionId"]) for a in answers] == [("feishu", "approve")] * 3
    assert batch.buttons() == [] and batch.text.count("by Owner via Feishu") == 3
