"""Tasks (spec §6): the list by view (each child under its parent), starting a task for an
agent, one task's detail, asking a task to stop."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote_to_bytes

from quart import Blueprint, Response, flash, redirect, request, url_for

from hub.core.agents.registry import agents_by_id, public_status
from hub.core.errors import HubError, NotFound
from hub.core.store.models import Agent, AgentStatus, Artifact
from hub.core.task_states import TERMINAL_STATUSES
from hub.core.work.batch_answers import batchable
from hub.core.work.conversations import MAX_TITLE_LENGTH
from hub.core.work.interactions import list_interactions
from hub.core.work.task_tree import TaskNode, child_tree, task_tree
from hub.core.work.tasks import (
    MAX_DESCRIPTION_LENGTH,
    create_task,
    list_tasks,
    request_cancel,
    task_detail,
)
from hub.host.templates import render_template
from hub.web.pages.cards import safe_url
from hub.web.pages.error_messages import said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.interactions import card_views
from hub.web.pages.paging import page_of
from hub.web.pages.session import current_user, login_required
from hub.web.pages.timeline import task_timeline
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("tasks", __name__)

# The tabs of spec §6, each a status filter the core understands (``statuses_for``).
VIEWS = ("all", "active", "waiting_for_me", "done")
TERMINAL = frozenset(s.value for s in TERMINAL_STATUSES)
# Top-level tasks a page lists (each with its children folded in): a screenful or two.
PAGE_SIZE = 50


async def task_panel(workspace_id: str, task_id: str) -> dict[str, Any]:
    """What the task's page and the detail panes show of one task."""
    detail = await task_detail(workspace_id, task_id)
    interactions = await list_interactions(workspace_id, task_id=task_id)
    detail["cards"] = await card_views(workspace_id, interactions)
    # Two or more approvals waiting: the page offers to answer them together.
    detail["batch"] = [c for c in detail["cards"] if c.open and c.card and batchable(c.card)]
    detail["child_tree"] = await child_tree(workspace_id, task_id)
    agents = await agents_by_id(
        workspace_id, [detail["targetAgentId"], *tree_agent_ids(detail["child_tree"])]
    )
    detail["agent"] = agents.get(detail["targetAgentId"] or "")
    detail["names"] = agent_names(list(agents.values()))
    detail["terminal"] = detail["status"] in TERMINAL
    for artifact in detail["artifacts"]:
        artifact["link"] = safe_url(artifact["url"])
        artifact["embedded"] = artifact["url"].startswith("data:")
    detail["timeline"] = await task_timeline(workspace_id, detail["timeline"], task_id=task_id)
    return detail


def agent_names(agents: list[Agent]) -> dict[str, str]:
    return {a.id: a.name for a in agents}


def tree_agent_ids(nodes: Iterable[TaskNode]) -> set[str]:
    """The agents the tasks of a tree are for, at every depth."""
    found: set[str] = set()
    for node in nodes:
        if node.task.get("targetAgentId"):
            found.add(node.task["targetAgentId"])
        found |= tree_agent_ids(node.children)
    return found


@blueprint.get("/w/<workspace_id>/tasks")
@login_required
async def index(workspace_id: str) -> Any:
    return await _render_index(workspace_id, status=200)


@blueprint.post("/w/<workspace_id>/tasks")
@login_required
async def create(workspace_id: str) -> Any:
    """A task for an agent, through the same service as the API's ``POST .../tasks``."""
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    form = await request.form
    try:
        task = await create_task(
            frame.workspace.id,
            form.get("title", ""),
            by=f"user:{user.id}",
            target_agent_id=form.get("targetAgentId", ""),
            description=form.get("description", ""),
        )
    except HubError as error:
        return await _render_index(
            workspace_id,
            status=error.status,
            error=error.to_dict(),
            typed={k: form.get(k, "") for k in ("title", "description", "targetAgentId")},
        )
    await flash(_("Task started. The agent receives it now, or as soon as it is back."))
    return redirect(url_for("pages.tasks.show", workspace_id=frame.workspace.id, task_id=task.id))


async def _render_index(
    workspace_id: str,
    *,
    status: int,
    error: dict[str, Any] | None = None,
    typed: dict[str, str] | None = None,
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    view = request.args.get("view", "all")
    if view not in VIEWS:
        view = "all"
    status_filter = None if view == "all" else view
    shown, paged = await page_of(
        lambda cursor: list_tasks(
            frame.workspace.id, status=status_filter, limit=PAGE_SIZE, cursor=cursor
        )
    )
    tasks = shown.items
    selected_id = request.args.get("task") or (tasks[0].id if tasks else None)
    selected = await task_panel(frame.workspace.id, selected_id) if selected_id else None
    tree = await task_tree(frame.workspace.id, tasks)
    # The agents the list names, and those the "New task" form offers (online ones).
    online = await Agent.filter(workspace_id=frame.workspace.id, status=AgentStatus.ONLINE)
    named = await agents_by_id(frame.workspace.id, tree_agent_ids(tree))
    agents = list({**named, **{a.id: a for a in online}}.values())
    html = await render_template(
        "pages/tasks.html",
        **frame.context(),
        view=view,
        views=VIEWS,
        tasks=tree,
        older=shown.next_cursor,
        paged=paged,
        names=agent_names(agents),
        statuses={a.id: AgentStatus(a.status).value for a in agents},  # "offline": lost
        selected=selected,
        new_task=new_task_form(
            sorted(online, key=lambda a: (a.created_at, a.id)),
            typed or {"targetAgentId": request.args.get("agent", "")},
        ),
        error=error,
        # A refused form stays as typed: a live redraw would put back the empty one.
        no_refresh=error is not None,
    )
    return html, status


def new_task_form(agents: list[Agent], typed: dict[str, str]) -> dict[str, Any]:
    """What the "New task" form offers: the agents online now (a task for one that is away
    waits in its queue, but a person starting work wants one that answers)."""
    return {
        "agents": [a for a in agents if public_status(a) == "online"],
        "typed": typed,
        "open": bool(typed.get("targetAgentId") or typed.get("title")),
        "max_title": MAX_TITLE_LENGTH,
        "max_description": MAX_DESCRIPTION_LENGTH,
    }


@blueprint.get("/w/<workspace_id>/tasks/<task_id>")
@login_required
async def show(workspace_id: str, task_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    task = await task_panel(frame.workspace.id, task_id)
    return await render_template(
        "pages/task.html",
        **frame.context(),
        task=task,
        next_url=url_for("pages.tasks.show", workspace_id=frame.workspace.id, task_id=task_id),
    )


@blueprint.post("/w/<workspace_id>/tasks/<task_id>/cancel")
@login_required
async def cancel(workspace_id: str, task_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    form = await request.form
    try:
        await request_cancel(
            frame.workspace.id, task_id, by=f"user:{user.id}", reason=form.get("reason", "")
        )
        await flash(_("Asked the agent to stop. The task ends once the agent confirms."))
    except HubError as error:
        await flash(said(error))
    return redirect(url_for("pages.tasks.show", workspace_id=frame.workspace.id, task_id=task_id))


@blueprint.get("/w/<workspace_id>/artifacts/<artifact_id>/download")
@login_required
async def download_artifact(workspace_id: str, artifact_id: str) -> Any:
    """An artifact an agent sent inline (a ``data:`` URL), as a download.

    Never rendered by the browser as a page: a ``data:`` URL of agent content could be
    HTML. It is sent as an attachment, typed plain text or bytes, with no sniffing.
    """
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    artifact = await Artifact.filter(id=artifact_id, workspace_id=frame.workspace.id).first()
    if artifact is None or not artifact.url.startswith("data:"):
        raise NotFound("This artifact has no inline content.", code="artifact_not_inline")
    header, _sep, data = artifact.url[len("data:") :].partition(",")
    try:
        body = (
            base64.b64decode(data, validate=False)
            if header.endswith(";base64")
            else (unquote_to_bytes(data))
        )
    except (binascii.Error, ValueError):
        raise NotFound(
            "This artifact's content cannot be read.", code="artifact_unreadable"
        ) from None
    textual = header.split(";")[0].startswith("text/") or header.startswith(";")
    filename = re.sub(r"[^\w.-]+", "_", artifact.name)[:100] or "artifact"
    return Response(
        body,
        content_type="text/plain; charset=utf-8" if textual else "application/octet-stream",
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Content-Security-Policy": "sandbox; default-src 'none'",
        },
    )
