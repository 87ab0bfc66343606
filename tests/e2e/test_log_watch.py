"""An event written by another process reaches a quiet agent's socket.

On SQLite nothing tells the serving hub of an append made by another process (a ``lineup``
command, a script using the core); on PostgreSQL a relay notification can be missed while
the relay reconnects. The hub's log watch finds the log ahead of what its sockets were
told and sends them back to it: here an agent that sends nothing after its hello gets a
task assigned by this test process within a few heartbeat intervals. (On PostgreSQL the
relay usually gets there first; either way the frame arrives, once.)
"""

from __future__ import annotations

from pathlib import Path

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.people.accounts import create_user
from hub.testing import HubProcess, opened
from tests.plugins.lap_client import raw_agent

SECRET = "log-watch-secret-" + "w" * 32


async def test_a_task_assigned_by_another_process_reaches_a_quiet_agent(
    database_url: str, tmp_path: Path
) -> None:
    async with opened(database_url):
        user, workspace = await create_user("watch@example.com", "correct horse", "Watch")
        code, _ = await create_pairing_code(workspace.id, secret_key=SECRET, ttl_s=600)
        agent, credential = await redeem_pairing_code(
            code, name="quiet", runtime="test", version="1", capabilities=[], secret_key=SECRET
        )
        await confirm_agent(workspace.id, agent.id, "quiet", by=f"user:{user.id}")
    env = {"LINEUP_SECRET_KEY": SECRET, "LINEUP_HEARTBEAT_INTERVAL_S": "0.5"}
    with HubProcess(database_url, tmp_path / "hub", **env) as hub:
        async with raw_agent(hub.url, credential) as (quiet, _):
            await quiet.hello(runtime="test")
            await quiet.quiet(1.5)  # the watch has looked at the log's end at least once
            task_id = new_id("task")
            async with opened(database_url):
                await append_event(
                    workspace.id,
                    "task.created",
                    {"taskId": task_id, "title": "from elsewhere", "targetAgentId": agent.id},
                    actor=f"user:{user.id}",
                )
            assigned = await quiet.frame_of_type("task.assigned", within=15)
            assert assigned["payload"]["task"]["id"] == task_id
            later = await quiet.quiet(1.5)
            assert not [frame for frame in later if frame["type"] == "task.assigned"]
