"""The task list as a tree: children under their parents, parents named when not shown, and
a bounded number of queries however many tasks a list holds."""

from __future__ import annotations

from typing import Any

import pytest

from hub.core.ids import new_id
from hub.core.store.models import Agent, Task, Workspace
from hub.core.work.task_tree import TaskNode, child_tree, task_tree
from hub.core.work.tasks import create_task, list_tasks
from tests.core.agent_reports import agent_reports, make_agent
from tests.core.queries import record_queries

ME = "user:usr_me"


async def step(agent: Agent, parent_id: str, title: str, **fields: Any) -> str:
    task_id = new_id("task")
    payload = {"taskId": task_id, "parentTaskId": parent_id, "title": title, **fields}
    await agent_reports(agent, "task.child_created", payload)
    return task_id


def shape(nodes: list[TaskNode]) -> list[Any]:
    return [
        (n.task["title"], n.parent_title, shape(n.children)) if n.children or n.parent_title
        else n.task["title"]
        for n in nodes
    ]  # fmt: skip


async def test_children_sit_under_their_parents(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    older = await create_task(workspace.id, "Older", by=ME, target_agent_id=agent.id)
    parent = await create_task(workspace.id, "Rebuild", by=ME, target_agent_id=agent.id)
    scan = await step(agent, parent.id, "Scan", status="running", progress=30)
    await step(agent, scan, "Scan the tests", status="running")
    await step(agent, parent.id, "Plan", status="succeeded")

    everything = await task_tree(workspace.id, (await list_tasks(workspace.id)).items)
    assert shape(everything) == [
        ("Rebuild", None, [("Scan", None, ["Scan the tests"]), "Plan"]),
        "Older",
    ]
    [rebuild, _older] = everything
    assert rebuild.children[0].task["progress"] == 30

    # A tab that holds a child but not its parent shows the child, its parent named.
    done = await task_tree(workspace.id, (await list_tasks(workspace.id, status="done")).items)
    assert shape(done) == [("Plan", "Rebuild", [])]
    # A tab that holds the parent shows its children too, whatever their status (one
    # level: the grandchild waits on its parent's own page).
    queued = await task_tree(workspace.id, (await list_tasks(workspace.id, status="queued")).items)
    assert shape(queued) == [("Rebuild", None, ["Scan", "Plan"]), "Older"]

    assert shape(await child_tree(workspace.id, parent.id)) == [
        ("Scan", None, ["Scan the tests"]),
        "Plan",
    ]
    assert await child_tree(workspace.id, older.id) == []


async def test_a_list_costs_the_same_queries_however_many_tasks_it_holds(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await make_agent(workspace)
    for n in range(30):
        parent = await create_task(workspace.id, f"Task {n}", by=ME, target_agent_id=agent.id)
        for m in range(3):
            await step(agent, parent.id, f"Step {n}.{m}")
    orphan_parent = await create_task(workspace.id, "Far away", by=ME, target_agent_id=agent.id)
    await step(agent, orphan_parent.id, "Lonely step", status="failed")

    queries = record_queries(monkeypatch)
    tasks = await Task.filter(workspace_id=workspace.id).exclude(title="Far away")
    queries.clear()
    nodes = await task_tree(workspace.id, tasks)
    # The children of every task shown, then the titles of the parents not shown.
    assert len(queries) == 2, queries
    assert len(nodes) == 31
    assert [n.parent_title for n in nodes if n.parent_title] == ["Far away"]
