"""An MCP client is an agent in the hub: online while connected, and its answers survive
a restart of the MCP server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.mcp.conftest import eventually, http_agent, live_hub, paired_credential, stdio_agent
from tests.sdk.live import LiveHub


async def agent_status(hub: LiveHub, agent_id: str) -> str:
    return str((await hub.api("GET", f"/agents/{agent_id}"))["status"])


def status_is(hub: LiveHub, agent_id: str, status: str) -> Callable[[], Any]:
    async def check() -> bool:
        return await agent_status(hub, agent_id) == status

    return check


async def test_an_answer_given_while_the_stdio_server_was_down_is_collected_after_restart(
    hub: LiveHub, tmp_path: Path
) -> None:
    state_dir = tmp_path / "agent"
    async with stdio_agent(hub, state_dir) as agent:
        assert await agent_status(hub, agent.agent_id) == "online"
        asked, _ = await agent.call(
            "request_approval", action="Rotate the API keys", wait_seconds=0.2
        )
        assert asked["status"] == "pending"
    await eventually(status_is(hub, agent.agent_id, "offline"))

    await hub.respond(asked["handle"], "reject", comment="Not during the launch")

    async with stdio_agent(hub, state_dir, confirm=False) as again:
        assert again.agent_id == agent.agent_id  # the stored credential, not a new agent
        await eventually(status_is(hub, again.agent_id, "online"))
        later, _ = await again.call("get_decision", handle=asked["handle"], wait_seconds=30)
    assert later["status"] == "decided" and later["approved"] is False
    assert later["comment"] == "Not during the launch" and later["via"] == "api"


async def test_an_http_agent_is_online_while_used_and_goes_offline_once_idle(
    db: str, tmp_path: Path
) -> None:
    async with live_hub(db, tmp_path / "hub", LINEUP_MCP_IDLE_S="1") as hub:
        credential = await paired_credential(hub, tmp_path / "agent")
        async with http_agent(hub, credential) as agent:
            await eventually(status_is(hub, agent.agent_id, "online"))
            task, _ = await agent.call("start_task", title="Index the wiki")
        await eventually(status_is(hub, agent.agent_id, "offline"))

        async with http_agent(hub, credential) as again:
            await eventually(status_is(hub, again.agent_id, "online"))
            done, _ = await again.call("finish_task", task_id=task["taskId"])
        assert done["status"] == "succeeded"
