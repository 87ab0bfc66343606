"""Slack end to end: a real hub process (``lineup serve``), real agents, and a local Slack.

The hub reaches the Slack on loopback through slack-sdk itself — its Web API client and
its Socket Mode client — or, with a signing secret instead of an app token, that Slack
posts signed requests to the hub's own endpoints over HTTP. The north star of spec §3.3
runs through Slack; so do each card kind and extra, the refusals, an outage and a 429.
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

import httpx
import pytest

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_user
from hub.core.store.models import (
    Agent,
    Interaction,
    InteractionStatus,
    Membership,
    Role,
    Task,
    Workspace,
)
from hub.core.store.notification_models import Notification
from hub.protocol.interactions import InteractionCard
from hub.sdk import Resolution
from tests.channels.conftest import eventually
from tests.channels.peers import SmtpPeer
from tests.channels.slack_peer import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    SlackMessage,
    SlackPeer,
    interactivity_body,
)
from tests.sdk.live import LiveHub, live_hub

ADA = "U0ADA"
EVE = "U0EVE"


def socket_mode(slack: SlackPeer) -> dict[str, str]:
    return {
        "LINEUP_SLACK_BOT_TOKEN": BOT_TOKEN,
        "LINEUP_SLACK_APP_TOKEN": APP_TOKEN,
        "LINEUP_SLACK_API_URL": slack.api_url,
    }


async def link(hub: LiveHub, slack: SlackPeer, user: str = ADA) -> str:
    channel = slack.person(user, "Ada")
    token, _ = await create_link_token(hub.user_id, "slack")
    await slack.send_dm(user, token)
    await eventually(lambda: any("Linked" in m.text for m in slack.conversation(channel)))
    return channel


async def card_in(slack: SlackPeer, channel: str, title: str) -> SlackMessage:
    return await eventually(
        lambda: next((m for m in slack.conversation(channel) if title in m.all_text), None)
    )


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


async def test_approve_a_production_change_from_slack(
    db: str,
    tmp_path: Path,
    smtp: SmtpPeer,
    slack: SlackPeer,
    demo_agent: Callable[[str, str], None],
) -> None:
    env = {"LINEUP_SMTP_URL": smtp.url, **socket_mode(slack)}
    async with live_hub(db, tmp_path / "hub", **env) as hub:
        channel = await link(hub, slack)
        demo_agent(hub.url, await hub.pairing_code())
        agent = await eventually(lambda: Agent.filter(workspace_id=hub.workspace_id).first())
        await hub.confirm(agent.id, "Demo agent")
        task_id = await hub.task(agent.id, "Upgrade the production dependencies")

        # The person's phone: a Slack message with the context and the choices.
        card = await eventually(
            lambda: Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING).first()
        )
        message = await card_in(slack, channel, card.payload["title"])
        assert "⛔ High risk" in message.all_text
        assert card.payload["impact"] in message.all_text
        assert message.buttons() == ["Approve", "Reject", "Edit and approve…"]
        await slack.press(ADA, message, "Approve")  # the first press only asks again
        await eventually(lambda: message.buttons() == ["⛔ Yes: Approve", "Cancel"])
        assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING
        await slack.press(ADA, message, "Yes: Approve")

        # The agent continues: result and artifact on the web.
        await eventually(lambda: Task.filter(id=task_id, status="succeeded").exists(), within=60)
        detail = await hub.api("GET", f"/tasks/{task_id}")
        assert len(detail["artifacts"]) == 1 and detail["summary"].startswith("Done")
        decided = await hub.api("GET", f"/interactions/{card.id}")
        assert (decided["via"], decided["respondedByName"]) == ("slack", "Owner")
        await eventually(lambda: "Approve — by Owner via Slack" in message.all_text)
        assert message.controls() == []

        # Every other surface is read-only: the mail's link page, the API.
        mail = next(
            m for m in smtp.to("owner@example.com") if card.payload["title"] in str(m["Subject"])
        )
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None
        approve = re.search(r"- Approve: (\S+)", plain.get_content()).group(1)  # type: ignore[union-attr]
        page = await hub.http.get(approve)
        assert page.status_code == 200 and "Approve — by Owner via Slack" in page.text
        late = await hub.http.post(
            f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card.id}/respond",
            json={"optionId": "reject"},
        )
        assert late.status_code == 409 and late.json()["error"]["details"]["via"] == "slack"


MIGRATION = {
    "kind": "db.migration",
    "fields": {"database": "prod-eu", "batchSize": 500},
    "editable": ["batchSize"],
}
REGIONS = [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "United States"}]
CARDS: dict[str, dict[str, Any]] = {
    "choice": {"type": "choice", "title": "Which region?", "options": REGIONS},
    "multi": {"type": "choice", "title": "Which checks?", "multiple": True, "minSelections": 1,
              "options": [{"id": "lint", "label": "Lint"}, {"id": "unit", "label": "Unit tests"}]},
    "input": {"type": "input", "title": "Contact address?", "input": {"format": "email"}},
    "review": {"type": "review", "title": "Review the plan", "content": "1. Back up\n2. Migrate"},
    "edit": {"type": "approval", "title": "Run the users migration?", "action": MIGRATION},
}  # fmt: skip


async def answer(slack: SlackPeer, message: SlackMessage, kind: str) -> None:
    if kind == "choice":
        await slack.press(ADA, message, "United States")
    elif kind == "multi":
        await slack.press(ADA, message, "", ticks=["Lint", "Unit tests"])
        await slack.press(ADA, message, "Submit")
    elif kind == "input":
        await slack.press(ADA, message, "Answer")
        modal = await eventually(lambda: slack.open_view(ADA))
        refused = await slack.submit(ADA, modal, {"answer": "not an address"})
        assert refused and "email address" in refused["errors"]["answer"]
        assert await slack.submit(ADA, modal, {"answer": "ops@example.com"}) is None
    elif kind == "review":
        await slack.press(ADA, message, "Request changes")
        modal = await eventually(lambda: slack.open_view(ADA))
        await slack.submit(ADA, modal, {"answer": "Add a rollback step"})
    else:
        await slack.press(ADA, message, "Edit and approve")
        modal = await eventually(lambda: slack.open_view(ADA))
        [block] = [b["block_id"] for b in modal.view["blocks"] if b["type"] == "input"]
        assert await slack.submit(ADA, modal, {block: "100"}) is None


EXPECTED = {
    "choice": {"optionId": "us"},
    "multi": {"optionIds": ["lint", "unit"]},
    "input": {"text": "ops@example.com"},
    "review": {"optionId": "request_changes", "comment": "Add a rollback step"},
}


@pytest.fixture
async def signed_posts_hub(db: str, tmp_path: Path, slack: SlackPeer) -> AsyncIterator[LiveHub]:
    """A hub with a signing secret and no app token: Slack posts to it over HTTP."""
    env = {
        "LINEUP_SLACK_BOT_TOKEN": BOT_TOKEN,
        "LINEUP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "LINEUP_SLACK_API_URL": slack.api_url,
    }
    async with (
        live_hub(db, tmp_path / "hub", **env) as hub,
        httpx.AsyncClient(base_url=hub.url, timeout=30) as slack_side,
    ):

        async def post(path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
            response = await slack_side.post(path, content=body, headers=headers)
            return response.status_code, response.text

        slack.post_to_hub = post
        yield hub


async def test_every_card_and_refusal_over_signed_posts_to_a_hub_process(
    signed_posts_hub: LiveHub, slack: SlackPeer, tmp_path: Path
) -> None:
    hub = signed_posts_hub
    channel = await link(hub, slack)
    async with hub.agent(tmp_path / "agent", "helper") as agent:
        asked = {
            kind: asyncio.create_task(
                agent.request_interaction(InteractionCard.model_validate(card))
            )
            for kind, card in CARDS.items()
        }
        messages = {
            kind: await card_in(slack, channel, card["title"]) for kind, card in CARDS.items()
        }

        # A stranger's press, a forged one and a replayed one: refused, nothing changes.
        await slack.press(EVE, messages["choice"], "Europe")
        assert await eventually(lambda: slack.told(EVE)) == ["This card is for someone else."]
        body = interactivity_body(slack.press_payload(ADA, messages["choice"], "Europe"))
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        forged = await hub.http.post(
            "/slack/interactivity",
            content=body,
            headers={**form, **slack.sign(body, secret="1" * 32)},
        )
        assert forged.status_code == 401
        assert forged.json()["error"]["code"] == "slack_signature_invalid"
        assert not any(task.done() for task in asked.values())

        for kind, message in messages.items():
            await answer(slack, message, kind)
            resolution: Resolution = await asyncio.wait_for(asked[kind], 30)  # the agent goes on
            interaction = await Interaction.get(id=resolution.interaction_id)
            assert interaction.responded_via == "slack"
            if kind in EXPECTED:
                assert interaction.response == EXPECTED[kind]
            else:
                assert interaction.response["action"]["fields"]["batchSize"] == 100
            await eventually(lambda m=message: "by Owner via Slack" in m.all_text)
            assert message.controls() == []

        genuine = slack.sign(body)
        # Signed a moment ago, and correctly: had it not been seen, it would be taken...
        first = await hub.http.post(
            "/slack/interactivity", content=body, headers={**form, **genuine}
        )
        assert first.status_code == 200
        await eventually(lambda: any("Already decided" in t for t in slack.told(ADA)))
        told = len(slack.told(ADA))
        # ...but sent again, it is a replay: refused before anything is looked at.
        replayed = await hub.http.post(
            "/slack/interactivity", content=body, headers={**form, **genuine}
        )
        assert replayed.status_code == 401
        await asyncio.sleep(0.3)
        assert len(slack.told(ADA)) == told
        choice = await Interaction.get(id=(await asked["choice"]).interaction_id)
        assert choice.response == {"optionId": "us"}


async def test_two_approvals_of_a_task_approved_together_in_slack(
    db: str, tmp_path: Path, slack: SlackPeer
) -> None:
    async with live_hub(db, tmp_path / "hub", **socket_mode(slack)) as hub:
        channel = await link(hub, slack)
        async with hub.agent(tmp_path / "agent", "releaser") as agent:
            task_id = await hub.task(agent.agent_id or "", "Ship the release")
            await agent.task({"id": task_id}).accept()
            waiting = [
                asyncio.create_task(
                    agent.request_approval(title, task_id=task_id, risk=risk)  # type: ignore[arg-type]
                )
                for title, risk in (
                    ("Migrate the database?", "high"),
                    ("Restart the workers?", "low"),
                )
            ]
            batch = await card_in(slack, channel, "2 approvals wait in “Ship the release”")
            await slack.press(ADA, batch, "Approve all (2)")
            await eventually(lambda: batch.buttons() == ["⛔ Yes, approve all (2)", "Cancel"])
            assert not any(w.done() for w in waiting)
            await slack.press(ADA, batch, "Yes, approve all")
            resolutions = await asyncio.wait_for(asyncio.gather(*waiting), 30)
            assert all(r.approved for r in resolutions)
            await eventually(lambda: batch.all_text.count("by Owner via Slack") == 2)
            assert batch.controls() == []


async def test_an_outage_and_a_429_delay_cards_and_lose_none(
    db: str, tmp_path: Path, slack: SlackPeer
) -> None:
    async with live_hub(db, tmp_path / "hub", **socket_mode(slack)) as hub:
        channel = await link(hub, slack)
        async with hub.agent(tmp_path / "agent", "operator") as agent:
            await slack.stop()
            first = asyncio.create_task(agent.request_approval("Renew the certificate?"))

            async def tried_twice() -> bool:
                row = await Notification.filter(surface="slack", kind="waiting").first()
                return row is not None and row.attempts >= 2

            await eventually(tried_twice, within=30)
            await slack.start()
            message = await card_in(slack, channel, "Renew the certificate?")
            await eventually(lambda: slack.socket_open, within=30)  # Socket Mode came back
            await slack.press(ADA, message, "Approve")
            assert (await asyncio.wait_for(first, 30)).approved

            slack.limits["chat.postMessage"] = [1]  # the next post: 429, Retry-After: 1
            second = asyncio.create_task(agent.request_approval("Rotate the logs?"))
            message = await card_in(slack, channel, "Rotate the logs?")
            posts = [when for method, when in slack.calls if method == "chat.postMessage"]
            assert posts[-1] - posts[-2] >= 1.0
            await slack.press(ADA, message, "Reject")
            assert not (await asyncio.wait_for(second, 30)).approved
        for title in ("Renew the certificate?", "Rotate the logs?"):
            assert len([m for m in slack.conversation(channel) if title in m.all_text]) == 1


async def test_a_quorum_decided_by_two_people_in_slack(
    db: str, tmp_path: Path, slack: SlackPeer
) -> None:
    async with live_hub(db, tmp_path / "hub", **socket_mode(slack)) as hub:
        bo, _ = await create_user("bo@example.com", "correct horse", "Bo")
        workspace = await Workspace.get(id=hub.workspace_id)
        await Membership.create(
            id=new_id("membership"), workspace=workspace, user=bo, role=Role.MEMBER
        )
        ada_channel = await link(hub, slack)
        bo_channel = slack.person("U0BO", "Bo")
        token, _ = await create_link_token(bo.id, "slack")
        await slack.send_dm("U0BO", token)
        await eventually(lambda: any("Linked" in m.text for m in slack.conversation(bo_channel)))
        async with hub.agent(tmp_path / "agent", "dns-bot") as agent:
            policy = {"mode": "quorum", "required": 2,
                      "approvers": ["owner@example.com", "bo@example.com"]}  # fmt: skip
            card = InteractionCard.model_validate(
                {"type": "approval", "title": "Move the DNS?", "policy": policy}
            )
            asked = asyncio.create_task(agent.request_interaction(card))
            ada_copy = await card_in(slack, ada_channel, "Move the DNS?")
            bo_copy = await card_in(slack, bo_channel, "Move the DNS?")
            await slack.press(ADA, ada_copy, "Approve")
            await eventually(lambda: "Your vote is recorded: 1 of 2" in ada_copy.all_text)
            await eventually(lambda: "1 of 2 approvals so far." in bo_copy.all_text)
            assert ada_copy.controls() == [] and not asked.done()
            await slack.press("U0BO", bo_copy, "Approve")
            assert (await asyncio.wait_for(asked, 30)).approved  # the agent goes on
            for copy in (ada_copy, bo_copy):
                await eventually(lambda c=copy: "by Bo via Slack" in c.all_text)
                assert copy.controls() == []
