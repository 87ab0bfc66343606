"""Asking a person through MCP, over stdio and streamable HTTP, against a live hub.

Each test runs once per transport: the official MCP client calls the tools, the card shows
up in the web inbox (JSON API) and in Telegram, and the answer given there comes back as
the tool's result, with who, via what and when.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from hub.protocol.actions import action_hash
from tests.channels.peers import BotApiPeer
from tests.mcp.conftest import ADA, eventually
from tests.sdk.live import LiveHub


async def waiting_card(
    hub: LiveHub, title: str, reader: httpx.AsyncClient | None = None
) -> dict[str, Any]:
    """The card titled so in the inbox of ``reader`` (a client of the workspace's API), or of
    the hub's owner: a card naming approvers waits in theirs alone."""

    async def look() -> dict[str, Any] | None:
        if reader is None:
            inbox = await hub.api("GET", "/inbox")
        else:
            response = await reader.get("/inbox")
            assert response.status_code == 200, response.text
            inbox = response.json()
        return next(
            (
                i["interaction"]
                for i in inbox["waitingForMe"]
                if i["interaction"]["card"]["title"] == title
            ),
            None,
        )

    return await eventually(look)  # type: ignore[no-any-return]


async def test_an_approval_answered_on_the_web_returns_the_decision(
    hub: LiveHub, bot_api: BotApiPeer, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "request_approval",
            action="Run the orders migration on production",
            impact="Locks the orders table for about a minute",
            risk="high",
            details={"command": "alembic upgrade head"},
        )
        card = await waiting_card(hub, "Run the orders migration on production")
        assert card["agentId"] == agent.agent_id and card["card"]["risk"] == "high"
        telegram = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "orders migration" in m.text), None)
        )
        assert "Locks the orders table" in telegram.text

        await hub.respond(card["id"], "approve", comment="Go, it is quiet now")
        result, progress = await call

    assert result["status"] == "decided" and result["approved"] is True
    assert result["optionId"] == "approve" and result["comment"] == "Go, it is quiet now"
    assert result["via"] == "api" and result["decidedBy"].startswith("user:")
    assert result["decidedAt"] and result["handle"] == card["id"]
    assert progress.seen, "the waiting call sent no progress notification"
    await eventually(lambda: "Approved" in telegram.text or "approve" in telegram.text.lower())


async def test_a_rejection_in_telegram_is_returned_as_a_rejection(
    hub: LiveHub, bot_api: BotApiPeer, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "request_approval", action="Delete the staging bucket", risk="medium"
        )
        telegram = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "staging bucket" in m.text), None)
        )
        query = bot_api.press(ADA, telegram, telegram.button("Reject")["callback_data"])
        await eventually(lambda: query in bot_api.answers)
        result, _ = await call

    assert result["status"] == "decided"
    assert result["approved"] is False and result["optionId"] == "reject"
    assert result["via"] == "telegram"


async def test_a_wait_that_runs_out_returns_a_handle_get_decision_resolves_later(
    hub: LiveHub, bot_api: BotApiPeer, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        first, _ = await agent.call(
            "ask_choice",
            question="Which region first?",
            options=[{"id": "eu", "label": "Europe"}, {"id": "us", "label": "United States"}],
            wait_seconds=0.3,
        )
        assert first["status"] == "pending" and first["handle"]
        pending = await agent.client.read_resource("lineup://interactions/pending")
        listed = json.loads(pending.contents[0].text)  # type: ignore[union-attr]
        assert [p["handle"] for p in listed] == [first["handle"]]

        await hub.api("POST", f"/interactions/{first['handle']}/respond", {"optionId": "us"})
        later, _ = await agent.call("get_decision", handle=first["handle"], wait_seconds=30)

    assert later["status"] == "decided" and later["optionId"] == "us"
    assert later["via"] == "api" and later["handle"] == first["handle"]


async def test_input_is_checked_against_its_format_before_it_is_returned(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "ask_input", question="Which version do we ship?", format="pattern", pattern=r"\d+\.\d+"
        )
        card = await waiting_card(hub, "Which version do we ship?")
        refused = await hub.http.post(
            f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card['id']}/respond",
            json={"text": "soon"},
        )
        assert refused.status_code == 422
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"text": "2.4"})
        result, _ = await call
    assert result["status"] == "decided" and result["text"] == "2.4"


async def test_an_exact_action_comes_back_as_the_person_edited_it(
    hub: LiveHub, bot_api: BotApiPeer, connect: Any, tmp_path: Path
) -> None:
    command = {"command": "alembic upgrade head", "cwd": "/srv/orders"}
    async with connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "request_approval",
            action="Migrate the orders database",
            exact_action={"kind": "shell.command", "fields": command, "editable": ["command"]},
        )
        card = await waiting_card(hub, "Migrate the orders database")
        proposed = action_hash("shell.command", command)
        await hub.api(
            "POST",
            f"/interactions/{card['id']}/respond",
            {
                "optionId": "approve",
                "actionHash": proposed,
                "action": {"command": "alembic upgrade +1"},
            },
        )
        result, _progress = await call

    edited = {**command, "command": "alembic upgrade +1"}
    assert result["approved"] is True
    assert result["action"] == {"kind": "shell.command", "fields": edited}
    assert result["actionHash"] == action_hash("shell.command", edited)
    assert result["editedFrom"] == proposed


async def test_a_tool_call_cannot_make_a_high_risk_card_approve_itself_on_expiry(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    """The tools take a policy, and the hub checks it as it checks any agent's: by default
    an expiry may approve only low- and medium-risk cards, so this one is refused, and
    nothing is asked."""
    async with connect(hub, tmp_path / "agent") as agent:
        result = await agent.client.call_tool(
            "request_approval",
            {
                "action": "Drop the old orders table",
                "risk": "high",
                "policy": {"expires_in_seconds": 60, "on_expiry": "approve"},
                "wait_seconds": 0,
            },
        )
        assert result.is_error
        assert "expiry_approval_not_allowed" in result.content[0].text  # type: ignore[union-attr]
        assert (await hub.api("GET", "/inbox"))["waitingForMe"] == []
