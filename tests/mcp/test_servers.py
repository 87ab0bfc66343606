"""Many MCP servers in one process, as on the hub's ``/mcp/``: each call reaches its own agent."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from mcp import Client

from hub.protocol.interactions import InteractionCard
from hub.sdk import Agent
from plugins.mcp_server.decisions import Asked
from plugins.mcp_server.tools import Toolbox, build_server
from plugins.mcp_server.worklog import TrackedTask
from tests.mcp.conftest import Progress


def toolbox(state_dir: Path, profile: str) -> Toolbox:
    hub = "http://127.0.0.1:9"  # never reached: the agents are not started
    agent = Agent(hub, credential=f"{profile}-credential", profile=profile, state_dir=state_dir)
    return Toolbox.for_agent(agent, wait_s=0)


async def test_two_servers_in_one_process_each_serve_their_own_agent(tmp_path: Path) -> None:
    first, second = toolbox(tmp_path, "first"), toolbox(tmp_path, "second")
    first.worklog.tasks["task_1"] = TrackedTask("task_1", "Deploy", "", "running", None, "agent")
    card = InteractionCard.model_validate({"id": "int_1", "type": "approval", "title": "Ship?"})
    first.decisions.pending["int_1"] = Asked(card, "task_1", datetime.now(UTC))

    async with Client(build_server(first)) as one, Client(build_server(second)) as other:
        for client, tasks in ((one, ["task_1"]), (other, [])):
            opened = await client.read_resource("lineup://tasks/open")
            listed = json.loads(opened.contents[0].text)  # type: ignore[union-attr]
            assert [t["taskId"] for t in listed] == tasks

        progress = Progress()
        result = await one.call_tool(
            "get_decision", {"handle": "int_1"}, progress_callback=progress
        )
        answer = result.structured_content or {}
        assert (answer["status"], answer["handle"], answer["waitedSeconds"]) == (
            "pending",
            "int_1",
            0,
        )
        assert progress.seen == [(0, 0, "Waiting for a person: Ship?")]

        # The other agent never asked it: no waiting on someone else's card.
        refused = await other.call_tool("get_decision", {"handle": "int_1"})
        assert refused.is_error and "unknown_handle" in refused.content[0].text  # type: ignore[union-attr]
    for box in (first, second):
        await box.agent.close()
