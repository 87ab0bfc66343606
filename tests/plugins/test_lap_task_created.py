"""``task.created`` from an agent: a task it starts on its own, always assigned to itself."""

from __future__ import annotations

from hub.core.store.models import Task
from hub.testing import HubProcess
from tests.plugins.lap_client import raw_agent
from tests.plugins.test_lap_gateway import paired


async def test_an_agent_starts_a_task_for_itself_only(
    hub: HubProcess,
    make_user,  # type: ignore[no-untyped-def]
) -> None:
    _, workspace = await make_user()
    agent_id, credential = await paired(hub, workspace)
    other_id, _ = await paired(hub, workspace, name="other")
    async with raw_agent(hub.url, credential) as (agent, _):
        await agent.hello()
        ack = await agent.call(
            "task.created", {"title": "Upgrade the database", "targetAgentId": other_id}
        )
        assert ack["type"] == "ack"
        task_id = ack["payload"]["taskId"]
        # Its own: the ack is all it hears of it (no ``task.assigned`` to start it again).
        assert not [f for f in await agent.quiet(0.5) if f["type"] == "task.assigned"]

        accepted = await agent.call("task.accepted", {"taskId": task_id})
        assert accepted["type"] == "ack"
        untitled = await agent.call("task.created", {"description": "no title"})
        assert untitled["type"] == "error"

    task = await Task.get(id=task_id)
    assert task.target_agent_id == agent_id and task.created_by == f"agent:{agent_id}"
    assert task.status == "running"
