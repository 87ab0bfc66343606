"""Teams end to end: invited by link and by mail, roles decide who may answer.

A real ``lineup serve`` process, an SMTP server and a Telegram Bot API server on loopback,
an SDK agent over LAP, and people on the hub's own web pages over HTTP (forms with their
CSRF tokens, session cookies). The owner acts through the JSON API with a token; the audit
API shows every step.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.channels.wording import not_allowed_to_answer_text
from hub.core.notify.channel_accounts import create_link_token
from hub.core.store.models import Interaction, InteractionStatus, User
from hub.core.store.notification_models import Notification, NotificationKind
from hub.sdk.agent import Agent
from hub.sdk.backoff import Backoff
from hub.testing import eventually
from tests.channels.answering import press, telegram_card
from tests.channels.peers import BotApiPeer, SmtpPeer
from tests.sdk.live import LiveHub, live_hub

MIA_CHAT = 5151
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def hub(
    db: str, tmp_path: Path, smtp: SmtpPeer, bot_api: BotApiPeer
) -> AsyncIterator[LiveHub]:
    env = {
        "LINEUP_SMTP_URL": smtp.url,
        "LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token,
        "LINEUP_TELEGRAM_API_URL": bot_api.url,
    }
    async with live_hub(db, tmp_path / "hub", **env) as running:
        yield running


async def form_post(browser: httpx.AsyncClient, page: str, action: str, **fields: str) -> Any:
    """Open ``page``, take its form's CSRF token, post ``fields`` to ``action`` as a browser
    would."""
    shown = await browser.get(page)
    assert shown.status_code == 200, shown.text[:500]
    token = _CSRF.search(shown.text)
    assert token is not None, shown.text[:500]
    return await browser.post(action, data={"csrf_token": token.group(1), **fields})


async def join_on_the_web(hub: LiveHub, url: str, name: str, email: str) -> httpx.AsyncClient:
    """Open the invitation link, sign up on its page and join; returns the signed-in browser."""
    path = url.removeprefix(hub.url)
    assert path.startswith("/join/lu_inv_")
    browser = httpx.AsyncClient(base_url=hub.url, timeout=30)
    shown = await browser.get(path)
    assert "Join a workspace" in shown.text and "Owner" in shown.text
    joined = await form_post(
        browser, path, path, display_name=name, email=email, password="correct horse"
    )
    assert joined.status_code in (302, 303), joined.text[:500]
    assert joined.headers["location"].endswith(f"/w/{hub.workspace_id}/inbox")
    again = await browser.get(path)  # used: the link is spent
    assert again.status_code == 410 and "invitation_invalid" in again.text
    return browser


async def test_a_team_joins_by_link_and_mail_and_only_those_who_may_answer_do(
    hub: LiveHub, smtp: SmtpPeer, bot_api: BotApiPeer, tmp_path: Path
) -> None:
    # The owner invites Vic as a viewer by a link they pass on, and Mia as a member by mail.
    link = await hub.api("POST", "/invitations", {"role": "viewer"})
    assert link["sentBy"] == "link" and link["url"].startswith(f"{hub.url}/join/")
    vic = await join_on_the_web(hub, link["url"], "Vic", "vic@example.com")
    mailed = await hub.api("POST", "/invitations", {"role": "member", "email": "mia@example.com"})
    assert "url" not in mailed  # only the address it was sent to gets the link
    mail = await eventually(lambda: next(iter(smtp.to("mia@example.com")), None))
    assert "Owner invited you" in str(mail["Subject"])
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    found = re.search(r"(http://\S+/join/\S+)", plain.get_content())
    assert found is not None
    mia = await join_on_the_web(hub, found.group(1), "Mia", "mia@example.com")
    members = {m["email"]: m["role"] for m in (await hub.api("GET", "/members"))["members"]}
    assert members == {
        "owner@example.com": "owner",
        "vic@example.com": "viewer",
        "mia@example.com": "member",
    }
    vic_id = (await User.get(email="vic@example.com")).id
    mia_id = (await User.get(email="mia@example.com")).id

    # Mia links Telegram; an agent asks for an approval.
    token, _ = await create_link_token(mia_id, "telegram")
    bot_api.send_text(MIA_CHAT, f"/start {token}", name="Mia")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(MIA_CHAT)))
    agent = Agent(
        hub.url,
        state_dir=tmp_path / "agent",
        backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        pairing_code=await hub.pairing_code(),
        name="Ops",
    )
    async with agent:
        assert agent.agent_id is not None
        await hub.confirm(agent.agent_id, "Ops")
        asking = asyncio.create_task(agent.request_approval("Restart the queue", risk="low"))
        card = await eventually(
            lambda: Interaction.filter(
                workspace_id=hub.workspace_id, status=InteractionStatus.PENDING
            ).first()
        )
        message = await telegram_card(bot_api, MIA_CHAT, "Restart the queue")
        # Notifications go to those who may answer: Vic, a viewer, was sent nothing.
        assert not await Notification.filter(user_id=vic_id, kind=NotificationKind.WAITING)

        # Mia becomes a viewer: the button she already has no longer answers.
        await hub.api("POST", f"/members/{mia_id}/role", {"role": "viewer"})
        answer = await press(bot_api, MIA_CHAT, message, "Approve")
        assert answer["text"] == not_allowed_to_answer_text()[:200]

        # Vic, a viewer, sees the card without buttons; the form and the API refuse him.
        page = f"/w/{hub.workspace_id}/interactions/{card.id}"
        shown = await vic.get(page)
        assert "Restart the queue" in shown.text and "data-viewer-note" in shown.text
        assert 'name="optionId"' not in shown.text
        refused = await form_post(vic, page, f"{page}/respond", optionId="approve")
        assert refused.status_code == 403 and "not_allowed_to_answer" in refused.text
        api = await vic.post(
            f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card.id}/respond",
            json={"optionId": "approve"},
        )
        assert api.status_code == 403
        assert api.json()["error"]["code"] == "not_allowed_to_answer"
        assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING

        # Made a member, Vic answers on the web; the agent gets his decision.
        await hub.api("POST", f"/members/{vic_id}/role", {"role": "member"})
        answered = await form_post(vic, page, f"{page}/respond", optionId="approve")
        assert answered.status_code in (302, 303), answered.text[:500]
        resolution = await asyncio.wait_for(asking, 30)
        assert resolution.option_id == "approve"
    decided = await Interaction.get(id=card.id)
    assert (decided.responded_by, decided.responded_via) == (f"user:{vic_id}", "web")

    # The last owner stays; Mia is removed.
    last = await hub.http.post(
        f"/api/v1/workspaces/{hub.workspace_id}/members/{hub.user_id}/role", json={"role": "member"}
    )
    assert last.status_code == 409 and last.json()["error"]["code"] == "last_owner"
    await hub.api("POST", f"/members/{mia_id}/remove")
    gone = await mia.get(f"/w/{hub.workspace_id}/inbox")
    assert gone.status_code == 404

    trail = (await hub.api("GET", "/audit"))["entries"]
    steps = [
        (e["type"], e["actor"], e.get("role"))
        for e in trail
        if e["type"].startswith("member.") or e["type"] == "interaction.resolved"
    ]
    owner, vic_actor, mia_actor = f"user:{hub.user_id}", f"user:{vic_id}", f"user:{mia_id}"
    assert steps == [
        ("member.invited", owner, "viewer"),
        ("member.joined", vic_actor, "viewer"),
        ("member.invited", owner, "member"),
        ("member.joined", mia_actor, "member"),
        ("member.role_changed", owner, "viewer"),
        ("member.role_changed", owner, "member"),
        ("interaction.resolved", vic_actor, None),
        ("member.removed", owner, None),
    ]
    assert trail[-1]["userId"] == mia_id
    await vic.aclose()
    await mia.aclose()
