"""Asking through MCP tasks (the ``io.modelcontextprotocol/tasks`` extension, 2026-07-28):
the client gets a task at once and polls, answers, cancels or follows it.

The official client on a live hub's ``/mcp/``, with ``tests.mcp.tasks_client.TasksClient``
declaring the extension; people answer through the JSON API and Telegram.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY

from tests.mcp.conftest import http_agent, paired_credential, stdio_agent
from tests.mcp.tasks_client import TasksClient
from tests.mcp.terminal import Terminal
from tests.mcp.test_decisions import waiting_card
from tests.sdk.live import LiveHub


@pytest.fixture
async def credential(hub: LiveHub, tmp_path: Path) -> str:
    return await paired_credential(hub, tmp_path / "agent")


async def test_a_task_is_polled_until_a_person_decides_in_the_hub(
    hub: LiveHub, credential: str
) -> None:
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        session = agent.client.session
        handle = await tasks.start(
            session, "request_approval", {"action": "Archive the 2019 invoices", "risk": "low"}
        )
        assert handle.status == "working" and handle.poll_interval_ms
        card = await waiting_card(hub, "Archive the 2019 invoices")
        assert card["id"] == handle.task_id
        working = await tasks.get(session, handle.task_id)
        assert working["status"] == "working" and "result" not in working

        await hub.respond(card["id"], "approve", comment="Fine")
        done = await tasks.until_done(session, handle.task_id)

    assert done["status"] == "completed" and done["resultType"] == "complete"
    decision = done["result"]["structuredContent"]
    assert decision["approved"] is True and decision["comment"] == "Fine"
    assert decision["via"] == "api" and decision["handle"] == handle.task_id


async def test_call_tool_resolves_a_task_to_the_tool_s_result(
    hub: LiveHub, credential: str
) -> None:
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        call = asyncio.create_task(
            agent.client.call_tool(
                "ask_choice",
                {
                    "question": "Which queue first?",
                    "options": [{"id": "mail", "label": "Mail"}, {"id": "sms", "label": "SMS"}],
                },
            )
        )
        card = await waiting_card(hub, "Which queue first?")
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"optionId": "sms"})
        result = await call
    assert result.structured_content is not None
    assert result.structured_content["optionId"] == "sms"


async def test_cancelling_a_task_takes_the_card_back_everywhere(
    hub: LiveHub, credential: str
) -> None:
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        session = agent.client.session
        handle = await tasks.start(session, "request_approval", {"action": "Resize the cluster"})
        await waiting_card(hub, "Resize the cluster")
        assert (await tasks.cancel(session, handle.task_id))["resultType"] == "complete"
        ended = await tasks.until_done(session, handle.task_id)
        refused = await hub.http.post(
            f"/api/v1/workspaces/{hub.workspace_id}/interactions/{handle.task_id}/respond",
            json={"optionId": "approve"},
        )
    assert ended["status"] == "cancelled" and "result" not in ended
    assert refused.status_code == 410  # the card takes no answer any more


async def test_a_task_s_status_is_streamed_to_a_listener(hub: LiveHub, credential: str) -> None:
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        session = agent.client.session
        handle = await tasks.start(session, "request_approval", {"action": "Flush the CDN"})
        listening = asyncio.create_task(tasks.listen(session, [handle.task_id]))
        card = await waiting_card(hub, "Flush the CDN")
        await asyncio.sleep(0.5)  # the stream is open before the answer comes
        await hub.respond(card["id"], "reject")
        ended = await asyncio.wait_for(listening, 30)
    assert ended["resultType"] == "complete"
    assert tasks.heard[-1]["taskId"] == handle.task_id
    assert tasks.heard[-1]["status"] == "completed"
    assert tasks.heard[-1]["result"]["structuredContent"]["approved"] is False


async def test_the_terminal_answers_a_task_s_input_request_unless_the_hub_was_first(
    hub: LiveHub, credential: str
) -> None:
    tasks = TasksClient()
    terminal = Terminal()  # declares elicitation; the test answers through tasks/update
    async with http_agent(
        hub, credential, extensions=[tasks], elicitation_callback=terminal
    ) as agent:
        session = agent.client.session
        first = await tasks.start(session, "request_approval", {"action": "Rotate the TLS keys"})
        waiting = await tasks.get(session, first.task_id)
        assert waiting["status"] == "input_required"
        ((key, question),) = waiting["inputRequests"].items()
        assert question["params"]["mode"] == "form"
        assert question["params"]["message"].startswith("Rotate the TLS keys")
        answer = {"action": "accept", "content": {"choice": "approve"}}
        await tasks.update(session, first.task_id, {key: answer})
        by_terminal = await tasks.until_done(session, first.task_id)

        second = await tasks.start(session, "request_approval", {"action": "Drop the cache"})
        card = await waiting_card(hub, "Drop the cache")
        await hub.respond(card["id"], "reject")
        in_hub = await tasks.until_done(session, second.task_id)
        # The input request ended with the hub's answer; a late answer changes nothing.
        await tasks.update(session, second.task_id, {"answer-1": answer})
        after = await tasks.get(session, second.task_id)

    assert by_terminal["result"]["structuredContent"]["via"] == "terminal"
    assert by_terminal["result"]["structuredContent"]["approved"] is True
    assert in_hub["status"] == "completed" and "inputRequests" not in in_hub
    assert after["result"]["structuredContent"]["via"] == "api"
    assert after["result"]["structuredContent"]["approved"] is False


async def test_unknown_tasks_and_clients_without_the_extension_are_refused(
    hub: LiveHub, credential: str
) -> None:
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        with pytest.raises(MCPError) as unknown:
            await tasks.get(agent.client.session, "int_00000000000000000000000000000000")
    async with http_agent(hub, credential) as plain:
        with pytest.raises(MCPError) as undeclared:
            await tasks.get(plain.client.session, "int_00000000000000000000000000000000")
        # Without the extension an asking tool answers as it always has.
        result, _ = await plain.call("request_approval", action="Nothing", wait_seconds=0)
    assert unknown.value.code == INVALID_PARAMS
    assert undeclared.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert result["status"] == "pending"


async def test_a_task_outlives_the_hub_process_that_started_it(
    hub: LiveHub, credential: str
) -> None:
    """The hub restarts while the card waits; the task is found again from its handle,
    and completes with the answer given after the restart."""
    tasks = TasksClient()
    async with http_agent(hub, credential, extensions=[tasks]) as agent:
        handle = await tasks.start(
            agent.client.session, "request_approval", {"action": "Renew the domain"}
        )
    card = await waiting_card(hub, "Renew the domain")
    await asyncio.to_thread(hub.process.stop)
    await asyncio.to_thread(hub.process.start)
    await hub.respond(card["id"], "approve")
    async with http_agent(hub, credential, extensions=[tasks]) as again:
        done = await tasks.until_done(again.client.session, handle.task_id)
    assert done["result"]["structuredContent"]["approved"] is True
    assert done["result"]["structuredContent"]["handle"] == handle.task_id


async def test_tasks_over_stdio_as_over_http(hub: LiveHub, tmp_path: Path) -> None:
    """``lineup mcp`` on stdio serves 2026-07-28 too: the same task, polled to its end."""
    tasks = TasksClient()
    async with stdio_agent(hub, tmp_path / "agent", extensions=[tasks]) as agent:
        session = agent.client.session
        assert agent.client.protocol_version == "2026-07-28"
        handle = await tasks.start(session, "ask_input", {"question": "Which branch?"})
        card = await waiting_card(hub, "Which branch?")
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"text": "release/2.4"})
        done = await tasks.until_done(session, handle.task_id)
    assert done["result"]["structuredContent"]["text"] == "release/2.4"
