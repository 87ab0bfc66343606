"""Spec §3.3 end to end: away from the desk, approve a production change from Telegram.

Everything is a real process or a real local peer: ``lineup serve``, ``lineup agent demo``,
an SMTP server, and a Bot API server that the hub's python-telegram-bot long-polls.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from hub.core.notify.channel_accounts import create_link_token
from hub.core.store.models import Agent, Interaction, InteractionStatus, Task
from tests.channels.answering import press, telegram_card
from tests.channels.conftest import eventually
from tests.channels.peers import BotApiPeer, SmtpPeer
from tests.sdk.live import LiveHub, live_hub

ADA = 4242


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


async def test_approve_a_production_change_from_telegram(
    hub: LiveHub, smtp: SmtpPeer, bot_api: BotApiPeer, demo_agent: Callable[[str, str], None]
) -> None:
    token, _ = await create_link_token(hub.user_id, "telegram")
    bot_api.send_text(ADA, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))

    demo_agent(hub.url, await hub.pairing_code())
    agent = await eventually(lambda: Agent.filter(workspace_id=hub.workspace_id).first())
    await hub.confirm(agent.id, "Demo agent")
    task_id = await hub.task(agent.id, "Upgrade the production dependencies")

    # The person's phone: a Telegram message with the context and two buttons.
    card = await eventually(
        lambda: Interaction.filter(task_id=task_id, status=InteractionStatus.PENDING).first()
    )
    message = await telegram_card(bot_api, ADA, card.payload["title"])
    assert "High risk" in message.text and card.payload["impact"][:40] in message.text
    assert [b["text"] for b in message.buttons()] == [
        "✅ Approve",
        "✖️ Reject",
        "Edit and approve on the web",  # the demo's package list is editable
    ]
    await press(bot_api, ADA, message, "Approve")
    assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING
    recorded = await press(bot_api, ADA, message, "Yes")
    assert recorded["text"].startswith("Thank you")

    # The agent continues: result and artifact on the web.
    await eventually(lambda: Task.filter(id=task_id, status="succeeded").exists(), within=60)
    detail = await hub.api("GET", f"/tasks/{task_id}")
    assert len(detail["artifacts"]) == 1 and detail["summary"].startswith("Done")
    decided = await hub.api("GET", f"/interactions/{card.id}")
    assert (decided["via"], decided["respondedByName"]) == ("telegram", "Owner")
    assert "Approve — by Owner via Telegram" in message.text and message.buttons() == []

    # The email that went out says the same on its link page.
    mail = next(
        m for m in smtp.to("owner@example.com") if card.payload["title"] in str(m["Subject"])
    )
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    approve = re.search(r"- Approve: (\S+)", plain.get_content()).group(1)  # type: ignore[union-attr]
    page = await hub.http.get(approve)
    assert page.status_code == 200 and "Approve — by Owner via Telegram" in page.text
