"""The person at the agent's terminal answers the same card as the phone, through MCP
elicitation: first answer wins, wherever it is given.

The official MCP client with an elicitation callback (``tests.mcp.terminal.Terminal``) on a
live hub's ``/mcp/``, on the 2025-11-25 handshake (``mode="legacy"``: a form request while
the call waits) and on 2026-07-28 (the form rides an input-required result; the client
retries with the answer), and over stdio.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from hub.protocol.actions import action_hash
from tests.channels.peers import BotApiPeer
from tests.mcp.by_hand import open_session, tool_call
from tests.mcp.conftest import ADA, eventually, http_agent, paired_credential, stdio_agent
from tests.mcp.terminal import Terminal, answer_at_terminal
from tests.mcp.test_decisions import waiting_card
from tests.sdk.live import LiveHub

MODES = ["legacy", "auto"]


@pytest.fixture
async def credential(hub: LiveHub, tmp_path: Path) -> str:
    return await paired_credential(hub, tmp_path / "agent")


async def interaction(hub: LiveHub, handle: str) -> dict[str, Any]:
    return await hub.api("GET", f"/interactions/{handle}")  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", MODES)
async def test_an_approval_answered_at_the_terminal_closes_the_card_everywhere(
    hub: LiveHub, bot_api: BotApiPeer, credential: str, mode: str
) -> None:
    result = await answer_at_terminal(
        hub,
        credential,
        "request_approval",
        {"action": "Tag release 2.4", "risk": "low"},
        {"choice": "approve", "comment": "Ship it"},
        mode=mode,
    )
    assert result["status"] == "decided" and result["approved"] is True
    assert result["via"] == result["decidedBy"] == "terminal"
    assert result["comment"] == "Ship it"
    card = await interaction(hub, result["handle"])
    assert card["status"] == "cancelled"  # taken back by its agent: no answer in the hub
    assert card["withdrawal"]["reason"] == "answered_in_terminal"
    assert card["withdrawal"]["note"] == "Approve: Ship it"


MIGRATION = {
    "kind": "db.migration",
    "fields": {"database": "prod-eu", "batch": 500, "dry_run": True, "tables": ["users"]},
    "editable": ["batch", "dry_run", "tables"],
}


@pytest.mark.parametrize("mode", MODES)
async def test_an_exact_action_is_edited_at_the_terminal(
    hub: LiveHub, credential: str, mode: str
) -> None:
    """The form holds each editable field it can (text, numbers, yes/no) at its proposed
    value; an edit there reaches the agent bound to the action, as from any surface."""
    schemas: list[dict[str, Any]] = []

    def edit(question: ElicitRequestFormParams) -> dict[str, Any]:
        schemas.append(question.requested_schema)
        return {"choice": "approve", "edit_batch": 250, "edit_dry_run": True}

    result = await answer_at_terminal(
        hub,
        credential,
        "request_approval",
        {"action": "Migrate the users table", "exact_action": MIGRATION},
        edit,
        mode=mode,
    )
    fields = schemas[0]["properties"]
    assert fields["edit_batch"]["default"] == 500 and fields["edit_batch"]["type"] == "number"
    assert fields["edit_dry_run"]["default"] is True
    assert "edit_tables" not in fields and "edit_database" not in fields  # no field holds them
    assert result["approved"] is True and result["via"] == "terminal"
    edited = {**MIGRATION["fields"], "batch": 250}
    assert result["action"]["fields"] == edited
    assert result["actionHash"] == action_hash("db.migration", edited)
    assert result["editedFrom"] == action_hash("db.migration", MIGRATION["fields"])
    card = await interaction(hub, result["handle"])
    assert card["withdrawal"]["note"] == "Approve (edited)"


@pytest.mark.parametrize("mode", MODES)
async def test_a_no_at_the_terminal_carries_no_edit_and_a_wrong_edit_is_asked_again(
    hub: LiveHub, credential: str, mode: str
) -> None:
    answers = iter(
        [
            {"choice": "approve", "edit_batch": "many"},  # not a number: asked again
            {"choice": "reject", "edit_batch": 1},  # a no: the edit is not taken
        ]
    )
    result = await answer_at_terminal(
        hub,
        credential,
        "request_approval",
        {"action": "Migrate the orders table", "exact_action": MIGRATION},
        lambda _question: next(answers),
        mode=mode,
    )
    assert result["approved"] is False and result["via"] == "terminal"
    assert "editedFrom" not in result
    assert result.get("action", {"fields": MIGRATION["fields"]})["fields"] == MIGRATION["fields"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_in_the_hub_first_wins_over_the_terminal(
    hub: LiveHub, bot_api: BotApiPeer, credential: str, mode: str
) -> None:
    terminal = Terminal(answer={"choice": "approve"}, hold=True)
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        call = await agent.call_in_background(
            "request_approval", action="Rebuild the search index", wait_seconds=60
        )
        question = await terminal.next_question()
        assert isinstance(question, ElicitRequestFormParams)
        assert question.message.startswith("Rebuild the search index")
        card = await waiting_card(hub, "Rebuild the search index")
        telegram = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "search index" in m.text), None)
        )
        query = bot_api.press(ADA, telegram, telegram.button("Reject")["callback_data"])
        await eventually(lambda: query in bot_api.answers)
        if mode == "legacy":
            # The answer in Telegram ended the question at the terminal.
            await eventually(lambda: terminal.withdrawn == 1)
        terminal.release()  # on 2026-07-28 the form was the client's; its answer comes late
        result, _ = await call

    assert result["status"] == "decided" and result["approved"] is False
    assert result["via"] == "telegram" and result["handle"] == card["id"]
    assert (await interaction(hub, card["id"]))["status"] == "resolved"


@pytest.mark.parametrize("mode", MODES)
async def test_declining_at_the_terminal_leaves_the_card_to_the_hub(
    hub: LiveHub, credential: str, mode: str
) -> None:
    terminal = Terminal(action="decline")
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        call = await agent.call_in_background(
            "ask_choice",
            question="Which database first?",
            options=[{"id": "orders", "label": "Orders"}, {"id": "users", "label": "Users"}],
        )
        card = await waiting_card(hub, "Which database first?")
        await eventually(lambda: terminal.questions)
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"optionId": "users"})
        result, _ = await call
    assert result["optionId"] == "users" and result["via"] == "api"


@pytest.mark.parametrize("mode", MODES)
async def test_a_wrong_answer_at_the_terminal_is_asked_again_with_the_reason(
    hub: LiveHub, credential: str, mode: str
) -> None:
    typed = iter(["not an address", "ops@example.com"])

    def person(params: ElicitRequestFormParams) -> dict[str, Any]:
        return {"text": next(typed)}

    terminal = Terminal(answer=person)
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        result, _ = await agent.call(
            "ask_input", question="Who gets the pager alerts?", format="email"
        )
    assert result["text"] == "ops@example.com" and result["via"] == "terminal"
    again = terminal.questions[1]
    assert isinstance(again, ElicitRequestFormParams)
    assert again.message.startswith("This must be an email address")
    assert again.requested_schema["properties"]["text"]["format"] == "email"


@pytest.mark.parametrize("mode", MODES)
async def test_a_multiple_choice_and_a_batch_are_answered_in_one_form(
    hub: LiveHub, credential: str, mode: str
) -> None:
    terminal = Terminal(
        answer=lambda p: (
            {"choices": ["eu", "ap"]}
            if "choices" in p.requested_schema["properties"]
            else {"item1_choice": "approve", "item2_choice": "reject", "item2_comment": "Not now"}
        )
    )
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        picked, _ = await agent.call(
            "ask_choice",
            question="Canary regions?",
            options=[{"id": r, "label": r.upper()} for r in ("eu", "us", "ap")],
            multiple=True,
            max_selections=2,
        )
        task, _ = await agent.call("start_task", title="Tidy the staging account")
        batch, _ = await agent.call(
            "request_approvals",
            task_id=task["taskId"],
            items=[{"action": "Delete old snapshots"}, {"action": "Stop idle instances"}],
        )

    assert picked["optionIds"] == ["eu", "ap"] and picked["via"] == "terminal"
    choices = terminal.questions[0].requested_schema["properties"]["choices"]  # type: ignore[union-attr]
    assert choices["maxItems"] == 2 and len(choices["items"]["anyOf"]) == 3
    assert [i["approved"] for i in batch["items"]] == [True, False]
    assert batch["items"][1]["comment"] == "Not now"
    assert {i["via"] for i in batch["items"]} == {"terminal"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_secret_is_typed_on_the_hub_s_page_never_into_the_client(
    hub: LiveHub, credential: str, mode: str
) -> None:
    terminal = Terminal()
    async with http_agent(hub, credential, mode=mode, elicitation_callback=terminal) as agent:
        call = await agent.call_in_background(
            "ask_input", question="The staging database password?", sensitive=True
        )
        card = await waiting_card(hub, "The staging database password?")
        question = await terminal.next_question()
        assert isinstance(question, ElicitRequestURLParams)
        assert question.url == f"{hub.url}/w/{hub.workspace_id}/interactions/{card['id']}"
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"text": "s3cret-pw"})
        result, _ = await call

    assert result["text"] == "s3cret-pw" and result["via"] == "api"
    assert terminal.opened == [question.url]
    assert all("s3cret" not in str(q) for q in terminal.questions)


async def test_a_card_with_named_approvers_is_not_asked_at_the_terminal(
    hub: LiveHub, credential: str
) -> None:
    terminal = Terminal(answer={"choice": "approve"})
    async with http_agent(hub, credential, elicitation_callback=terminal) as agent:
        result, _ = await agent.call(
            "request_approval",
            action="Transfer the domain",
            policy={"approvers": ["owner@example.com"]},
            wait_seconds=0.5,
        )
    assert result["status"] == "pending" and terminal.questions == []


async def test_the_terminal_answers_over_stdio_too(hub: LiveHub, tmp_path: Path) -> None:
    terminal = Terminal(answer={"choice": "request_changes", "comment": "Add a test"})
    async with stdio_agent(hub, tmp_path / "agent", elicitation_callback=terminal) as agent:
        result, _ = await agent.call(
            "request_review", title="Review the retry patch", content="diff --git a/x b/x"
        )
    assert result["approved"] is False and result["optionId"] == "request_changes"
    assert result["via"] == "terminal" and result["comment"] == "Add a test"


async def test_a_form_answered_after_the_hub_restarted_still_decides(
    hub: LiveHub, credential: str
) -> None:
    """On 2026-07-28 the call's state travels with the client between rounds, sealed under
    the agent's credential: a server made anew (a restarted hub, an idle agent opened
    again) reads it, and asks nothing twice."""
    terminal = Terminal(answer={"choice": "approve"}, hold=True)
    async with http_agent(hub, credential, elicitation_callback=terminal) as agent:
        call = await agent.call_in_background("request_approval", action="Move the DNS zone")
        await terminal.next_question()
        await asyncio.to_thread(hub.process.stop)
        await asyncio.to_thread(hub.process.start)
        terminal.release()
        result, _ = await call
    assert result["via"] == "terminal" and result["approved"] is True
    inbox = await hub.api("GET", "/inbox")
    assert [
        i for i in inbox["waitingForMe"] if i["interaction"]["card"]["title"] == "Move the DNS zone"
    ] == []


async def test_a_2025_06_18_client_gets_the_form_of_its_revision(
    hub: LiveHub, credential: str
) -> None:
    """The official client speaks 2025-11-25 at the oldest, so this is the wire itself: a
    client of 2025-06-18 with the elicitation capability of that revision (no modes) is
    sent the enum with display names, not 2025-11-25's titled one, and its answer wins."""
    call = tool_call("request_approval", {"action": "Reboot the router"})
    async with httpx.AsyncClient(base_url=hub.url, timeout=30) as http:
        session = await open_session(
            http,
            credential,
            revision="2025-06-18",
            capabilities={"elicitation": {}},
            client="older-client",
        )
        async with http.stream("POST", "/mcp/", json=call, headers=session) as stream:
            async for message in _messages(stream):
                if message.get("method") == "elicitation/create":
                    schema = message["params"]["requestedSchema"]
                    answer = {"action": "accept", "content": {"choice": "approve"}}
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                    sent = await http.post("/mcp/", json=reply, headers=session)
                    assert sent.status_code == 202
                elif message.get("id") == 2:
                    result = message["result"]
                    break

    choice = schema["properties"]["choice"]
    assert choice["enum"] == ["approve", "reject"]
    assert choice["enumNames"] == ["Approve", "Reject"] and "oneOf" not in choice
    assert result["structuredContent"]["via"] == "terminal"
    assert result["structuredContent"]["approved"] is True


async def _messages(stream: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a server-sent event stream."""
    data = ""
    async for line in stream.aiter_lines():
        if line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield json.loads(data)
            data = ""
