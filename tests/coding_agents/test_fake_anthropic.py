"""The fake Messages API on its own, without the CLI: what it streams for a script, that a
title request takes no turn, and what ``tool_results`` reads back."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.coding_agents.fake_anthropic import FakeAnthropic, Text, ToolResult, ToolUse

pytestmark = pytest.mark.same_on_every_database

AGENT_CALL = {"model": "m", "stream": True, "tools": [{"name": "Bash"}], "messages": []}
TITLE_CALL = {"model": "m", "stream": True, "output_config": {"format": {"type": "json_schema"}}}


def streamed(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    answer = httpx.post(f"{url}/v1/messages?beta=true", json=body, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/event-stream"
    return [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]


def test_a_title_request_takes_no_turn() -> None:
    with FakeAnthropic([Text("First.")]) as api:
        title = streamed(api.url, TITLE_CALL)
        turn = streamed(api.url, {**AGENT_CALL, "output_config": {"effort": "high"}})
        after = streamed(api.url, AGENT_CALL)

    (title_delta,) = [event for event in title if event["type"] == "content_block_delta"]
    assert json.loads(title_delta["delta"]["text"]) == {"title": "Test session"}
    (turn_delta,) = [event for event in turn if event["type"] == "content_block_delta"]
    assert turn_delta["delta"]["text"] == "First."
    (after_delta,) = [event for event in after if event["type"] == "content_block_delta"]
    assert after_delta["delta"]["text"] == "Done."
    assert len(api.requests) == 3 and len(api.model_calls()) == 2


def test_a_turn_of_two_tool_calls_streams_two_blocks() -> None:
    calls = (ToolUse("Bash", {"command": "ls"}), ToolUse("Bash", {"command": "pwd"}))
    with FakeAnthropic([calls]) as api:
        events = streamed(api.url, AGENT_CALL)

    starts = [event for event in events if event["type"] == "content_block_start"]
    deltas = [event for event in events if event["type"] == "content_block_delta"]
    assert [start["content_block"]["input"] for start in starts] == [{}, {}]
    assert [json.loads(delta["delta"]["partial_json"]) for delta in deltas] == [
        {"command": "ls"},
        {"command": "pwd"},
    ]
    (stop,) = [event for event in events if event["type"] == "message_delta"]
    assert stop["delta"]["stop_reason"] == "tool_use"


def test_tool_results_reads_the_latest_conversation() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True}
    conversation = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]},
        {"role": "user", "content": [{**result, "content": [{"type": "text", "text": "No."}]}]},
    ]
    with FakeAnthropic() as api:
        streamed(api.url, {**AGENT_CALL, "messages": conversation[:1]})
        streamed(api.url, {**AGENT_CALL, "messages": conversation})

    assert api.tool_results() == [ToolResult("toolu_1", "No.", is_error=True)]


def test_other_paths_are_not_found() -> None:
    with FakeAnthropic() as api:
        answer = httpx.get(f"{api.url}/v1/models", timeout=10)
    assert answer.status_code == 404
