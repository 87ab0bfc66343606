"""Tasks as people read them: each child task under its parent, with its own progress.

A list (a tab of the task list, or one task's children) is arranged into a tree at a bounded
cost: one query for the children of every task shown, one for the titles of parents that
are not shown. A child whose parent is outside the list stays at the top level, with its
parent named, so a filter never hides a step of work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hub.core.store.models import Task
from hub.core.work.views import task_view

# Children fetched for one list at most: a runaway agent spawning thousands of steps costs
# one bounded query, not a page that never ends.
CHILDREN_LIMIT = 500


@dataclass
class TaskNode:
    """One task of a tree: its wire view, the children shown under it, and for a top-level
    child the title of its parent (which the list does not show)."""

    task: dict[str, Any]
    children: list[TaskNode] = field(default_factory=list)
    parent_title: str | None = None


async def task_tree(
    workspace_id: str, tasks: Iterable[Task], *, name_parents: bool = True
) -> list[TaskNode]:
    """``tasks`` (in their order) as a forest, with the children of each under it (oldest
    first, as steps are read). ``name_parents=False`` when the page shows the parent
    already (one task's own children)."""
    listed = list(tasks)
    known = {t.id: t for t in listed}
    if known:
        # In the order of the (workspace, parent, created) index, each parent's children
        # oldest first: ordered by creation alone, the planner walks the workspace's tasks
        # in that order looking for these few. They are sorted for the tree below.
        children = await (
            Task.filter(workspace_id=workspace_id, parent_id__in=list(known))
            .exclude(id__in=list(known))
            .order_by("parent_id", "created_at", "id")
            .limit(CHILDREN_LIMIT)
        )
        known.update((c.id, c) for c in children)
    under: dict[str, list[Task]] = {}
    for task in sorted(known.values(), key=lambda t: (t.created_at, t.id)):
        if task.parent_id is not None and task.parent_id in known:
            under.setdefault(task.parent_id, []).append(task)
    roots = [t for t in listed if t.parent_id not in known]
    missing = {t.parent_id for t in roots if t.parent_id is not None} if name_parents else set()
    parents: dict[str, str] = (
        dict(
            await Task.filter(workspace_id=workspace_id, id__in=sorted(missing)).values_list(
                "id", "title"
            )
        )
        if missing
        else {}
    )
    placed: set[str] = set()

    def node(task: Task) -> TaskNode:
        placed.add(task.id)
        return TaskNode(
            task_view(task),
            [node(c) for c in under.get(task.id, []) if c.id not in placed],
            parents.get(task.parent_id or ""),
        )

    return [node(t) for t in roots if t.id not in placed]


async def child_tree(workspace_id: str, task_id: str) -> list[TaskNode]:
    """One task's children, each with its own children under it (one query a level)."""
    children = await (
        Task.filter(workspace_id=workspace_id, parent_id=task_id)
        .order_by("created_at", "id")
        .limit(CHILDREN_LIMIT)
    )
    return await task_tree(workspace_id, children, name_parents=False)
