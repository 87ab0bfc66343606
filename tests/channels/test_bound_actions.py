"""Decisions bound to the exact action, end to end over real sockets.

A hub process (``lineup serve``), an SDK agent connected to it over LAP, the person's
browser as plain HTTP (login, the card's form, the high-risk second step), and their phone
as a local Bot API server the hub long-polls. The agent proposes a migration whose
statements and batch size the person may edit; what it receives is what the person
approved, bound by hash, and the audit API shows it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.core.notify.channel_accounts import create_link_token
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import DeliveredCard
from hub.protocol.actions import ProposedAction, action_hash, short_hash
from hub.sdk import ActionMismatch, Agent, Resolution
from tests.channels.answering import press, telegram_card
from tests.channels.conftest import eventually
from tests.channels.peers import BotApiPeer
from tests.sdk.live import LiveHub, live_hub

ADA = 5151
MIGRATION = ProposedAction(
    kind="db.migration",
    fields={
        "database": "prod-eu",
        "statements": ["ALTER TABLE users ADD plan text", "UPDATE users SET plan = 'free'"],
        "batchSize": 500,
    },
    editable=["statements", "batchSize"],
)
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def hub(db: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[LiveHub]:
    env = {"LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token, "LINEUP_TELEGRAM_API_URL": bot_api.url}
    async with live_hub(db, tmp_path / "hub", **env) as running:
        yield running


@pytest.fixture
async def agent(hub: LiveHub, tmp_path: Path) -> AsyncIterator[Agent]:
    async with hub.agent(tmp_path / "agent", "migrator") as agent:
        yield agent


async def ask(agent: Agent) -> tuple[asyncio.Task[Resolution], Interaction]:
    """The agent asks for approval of MIGRATION and waits; returns the wait and the card."""
    before = set(await Interaction.all().values_list("id", flat=True))
    waiting = asyncio.create_task(
        agent.request_approval(
            "Run the users migration?",
            impact="Adds a column to users in production.",
            risk="high",
            action=MIGRATION,
        )
    )
    card = await eventually(
        lambda: Interaction.filter(status=InteractionStatus.PENDING).exclude(id__in=before).first()
    )
    return waiting, card


async def signed_in(hub: LiveHub) -> httpx.AsyncClient:
    browser = httpx.AsyncClient(base_url=hub.url, timeout=30)
    page = await browser.get("/login")
    csrf = _CSRF.search(page.text).group(1)  # type: ignore[union-attr]
    login = {"email": "owner@example.com", "password": "correct horse", "csrf_token": csrf}
    assert (await browser.post("/login", data=login)).status_code == 302
    return browser


def hidden(page: str, name: str) -> str:
    found = re.search(rf'<(?:input type="hidden"|textarea) name="{re.escape(name)}"'
                      rf'(?: value="([^"]*)"| hidden>\n(.*?)</textarea>)', page, re.S)  # fmt: skip
    assert found, f"no hidden {name} on the page"
    return found.group(1) if found.group(1) is not None else found.group(2)


async def audit_entry(hub: LiveHub, interaction_id: str) -> dict[str, Any]:
    trail = await hub.api("GET", "/audit")
    entries = trail["entries"] if isinstance(trail, dict) else trail
    return next(
        e
        for e in entries
        if e["type"] == "interaction.resolved" and e["interactionId"] == interaction_id
    )


async def test_an_edit_on_the_web_reaches_the_agent_bound_to_its_new_hash(
    hub: LiveHub, agent: Agent
) -> None:
    waiting, card = await ask(agent)
    browser = await signed_in(hub)
    page = (await browser.get(f"/w/{hub.workspace_id}/interactions/{card.id}")).text
    assert "db.migration" in page and f"Fingerprint {short_hash(MIGRATION.hash)}" in page
    form = {
        "csrf_token": _CSRF.search(page).group(1),  # type: ignore[union-attr]
        "actionHash": hidden(page, "actionHash"),
        "optionId": "approve",
        "action.statements": "ALTER TABLE users ADD plan text\r\n",
        "action.batchSize": "100",
    }
    respond = f"/w/{hub.workspace_id}/interactions/{card.id}/respond"
    step = await browser.post(respond, data=form)
    # High risk: the edit is carried through the second, deliberate step.
    assert step.status_code == 200 and "You edited the action" in step.text
    confirm = {
        "csrf_token": _CSRF.search(step.text).group(1),  # type: ignore[union-attr]
        "optionId": "approve",
        "confirm": "approve",
        "actionHash": hidden(step.text, "actionHash"),
        "action.statements": hidden(step.text, "action.statements"),
        "action.batchSize": hidden(step.text, "action.batchSize"),
    }
    assert (await browser.post(respond, data=confirm)).status_code == 302
    await browser.aclose()

    answer = await asyncio.wait_for(waiting, 30)
    edited = {
        **MIGRATION.fields,
        "statements": ["ALTER TABLE users ADD plan text"],
        "batchSize": 100,
    }
    assert answer.approved and answer.via == "web" and answer.edited
    assert answer.action == {"kind": "db.migration", "fields": edited}
    assert answer.action_hash == action_hash("db.migration", edited) != MIGRATION.hash
    assert answer.edited_from == MIGRATION.hash
    assert answer.approved_action(MIGRATION) == edited
    # Never onto another action: the SDK refuses, whatever the agent meant to run.
    elsewhere = ProposedAction(
        kind="db.migration",
        fields={**MIGRATION.fields, "database": "prod-us"},
        editable=["batchSize"],
    )
    with pytest.raises(ActionMismatch):
        answer.approved_action(elsewhere)

    entry = await audit_entry(hub, card.id)
    assert entry["via"] == "web" and entry["decision"] == {"optionId": "approve"}
    assert entry["actionHash"] == answer.action_hash and entry["editedFrom"] == MIGRATION.hash
    assert entry["action"]["fields"] == edited


async def test_a_stale_hash_is_refused_and_telegram_approves_what_it_showed(
    hub: LiveHub, agent: Agent, bot_api: BotApiPeer
) -> None:
    token, _ = await create_link_token(hub.user_id, "telegram")
    bot_api.send_text(ADA, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
    waiting, card = await ask(agent)

    stale = await hub.http.post(
        f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card.id}/respond",
        json={"optionId": "approve", "actionHash": action_hash("db.migration", {})},
    )
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "action_changed"
    assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING

    message = await telegram_card(bot_api, ADA, "Run the users migration?")
    assert "db.migration" in message.text and short_hash(MIGRATION.hash) in message.text
    assert "ALTER TABLE users ADD plan text" in message.text
    edit = message.button("Edit and approve on the web")
    assert "/a/" in edit["url"]  # a signed link to the web form

    # A message that showed another action cannot approve this one.
    row = await DeliveredCard.get(surface="telegram", interaction_id=card.id)
    shown = row.state["actionHash"]
    assert shown == MIGRATION.hash
    await DeliveredCard.filter(id=row.id).update(
        state={**row.state, "actionHash": action_hash("db.migration", {"database": "old"})}
    )
    await press(bot_api, ADA, message, "Approve")
    refused = await press(bot_api, ADA, message, "Yes")
    assert "changed since you saw it" in refused["text"]
    assert (await Interaction.get(id=card.id)).status == InteractionStatus.PENDING

    # The message as sent, unedited: approved with the hash it showed (still confirming).
    confirming = (await DeliveredCard.get(id=row.id)).state
    await DeliveredCard.filter(id=row.id).update(state={**confirming, "actionHash": shown})
    recorded = await press(bot_api, ADA, message, "Yes")
    assert recorded["text"].startswith("Thank you")
    answer = await asyncio.wait_for(waiting, 30)
    assert answer.via == "telegram" and not answer.edited
    assert answer.action_hash == MIGRATION.hash
    assert answer.approved_action(MIGRATION) == MIGRATION.fields
    await eventually(lambda: short_hash(MIGRATION.hash) in message.text and not message.buttons())

    entry = await audit_entry(hub, card.id)
    assert entry["via"] == "telegram" and entry["actionHash"] == MIGRATION.hash
    assert "editedFrom" not in entry


async def test_telegram_links_an_editable_action_to_the_web_form(
    hub: LiveHub, agent: Agent, bot_api: BotApiPeer
) -> None:
    token, _ = await create_link_token(hub.user_id, "telegram")
    bot_api.send_text(ADA, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
    waiting, card = await ask(agent)
    message = await telegram_card(bot_api, ADA, "Run the users migration?")
    link = message.button("Edit and approve on the web")["url"]

    async with httpx.AsyncClient(timeout=30) as phone:  # signed link: no session needed
        page = (await phone.get(link)).text
        assert 'name="action.batchSize"' in page and 'name="action.database"' not in page
        decided = await phone.post(
            link,
            data={
                "actionHash": hidden(page, "actionHash"),
                "optionId": "approve",
                "action.statements": "\n".join(MIGRATION.fields["statements"]),
                "action.batchSize": "250",
            },
        )
    assert decided.status_code == 200

    answer = await asyncio.wait_for(waiting, 30)
    assert answer.via == "web" and answer.edited
    assert answer.approved_action(MIGRATION) == {**MIGRATION.fields, "batchSize": 250}
    entry = await audit_entry(hub, card.id)
    assert entry["editedFrom"] == MIGRATION.hash and entry["action"]["fields"]["batchSize"] == 250
