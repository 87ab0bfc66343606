"""A coding agent's card is a card like any other: the workspace's quorum rule applies, and
the votes come from Telegram and from an email link, while the real ``lineup-hook`` waits
on a real hub process; the hub's answer goes back to the CLI once the quorum is met."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_user
from hub.core.store.models import Interaction, Membership, Role
from hub.testing import eventually
from tests.channels.answering import mail_links, press, telegram_card
from tests.channels.peers import BotApiPeer, SmtpPeer
from tests.coding_agents.hub_side import connected_machine, finished

pytestmark = pytest.mark.timeout(150)

ADA = 4242
PUBLIC_URL = "http://hub.test"  # what the mail links name; they are followed to the hub


async def test_a_quorum_decides_a_coding_agents_call_from_telegram_and_an_email(
    db: str, tmp_path: Path, smtp: SmtpPeer, bot_api: BotApiPeer
) -> None:
    env = {
        "LINEUP_SMTP_URL": smtp.url,
        "LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token,
        "LINEUP_TELEGRAM_API_URL": bot_api.url,
        "LINEUP_PUBLIC_URL": PUBLIC_URL,
    }
    async with connected_machine(db, tmp_path, **env) as machine:
        hub = machine.hub
        token, _ = await create_link_token(hub.user_id, "telegram")
        bot_api.send_text(ADA, f"/start {token}")
        await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
        bea, _ = await create_user("bea@example.com", "correct horse", "Bea")
        await Membership.create(
            id=new_id("membership"), workspace_id=hub.workspace_id, user=bea, role=Role.MEMBER
        )
        quorum = {"mode": "quorum", "required": 2, "approvers": ["owner@example.com", bea.email]}
        await hub.api("POST", "/policy-rules", {"policy": quorum})

        call = machine.event(
            "PermissionRequest",
            tool_name="Bash",
            tool_input={"command": "make deploy", "description": "Ship it"},
        )
        waiting = await machine.start_hook(call, CLAUDE_CODE_ENTRYPOINT="cli")

        # Ada votes on her phone, in Telegram: one of two.
        message = await telegram_card(bot_api, ADA, "make deploy")
        assert "Claude Code wants to run" in message.text
        voted = await press(bot_api, ADA, message, "Allow once")
        assert "1 of 2" in voted["text"]
        assert waiting.returncode is None  # the CLI still waits: one vote is not the quorum

        # Bea votes from her mail's link: the quorum is met, and the CLI goes on.
        def bea_mail() -> object:
            return next((m for m in smtp.to(bea.email) if "make deploy" in str(m["Subject"])), None)

        mail = await eventually(bea_mail)
        link = mail_links(mail)["Allow once"]  # type: ignore[arg-type]
        async with httpx.AsyncClient(base_url=hub.url, timeout=30) as phone:
            decided = await phone.post(link, data={})
        assert decided.status_code == 200, decided.text

        run = await finished(waiting)
        decision = run.output["hookSpecificOutput"]["decision"]  # type: ignore[index]
        assert decision == {"behavior": "allow"}
        card = await Interaction.get(agent_id=machine.agent_id)
        assert card.status == "resolved"
        assert sorted(v["via"] for v in card.votes) == ["email", "telegram"]
        # Ada's message shows the outcome, its buttons gone.
        await eventually(lambda: not message.buttons())
