"""The task list as a tree (each child under its parent, with its progress), starting a task
from the tasks page, and the first task offered once a paired agent is confirmed."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hub.core.agents.registry import redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event, last_sequence
from hub.core.store.models import Agent, AgentStatus, Membership, Role, Task
from tests.web.pages.world import SECRET_KEY, build_world


class TaskItems(HTMLParser):
    """Each ``li[data-task]`` of a page with the task it sits under and the text inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str | None] = []  # one entry per open <li>: its task, else None
        self.parent: dict[str, str | None] = {}
        self.progress: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "li":
            task = values.get("data-task")
            if task:
                self.parent[task] = next((t for t in reversed(self.open) if t), None)
            self.open.append(task)
        elif tag == "progress":
            here = next((t for t in reversed(self.open) if t), None)
            if here and here not in self.progress:
                self.progress[here] = values.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "li" and self.open:
            self.open.pop()


def items(html: str) -> TaskItems:
    parser = TaskItems()
    parser.feed(html)
    return parser


async def child(
    workspace_id: str, agent_id: str, parent_id: str, title: str, **more: object
) -> str:
    task_id = new_id("task")
    payload = {"taskId": task_id, "parentTaskId": parent_id, "title": title, **more}
    await append_event(workspace_id, "task.child_created", payload, actor=f"agent:{agent_id}")
    return task_id


async def test_child_tasks_sit_under_their_parent_with_their_progress(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    scan = await Task.get(parent_id=world.task_id)
    plan = await child(
        ada.workspace_id, world.agent.id, world.task_id, "Plan the upgrade", status="running",
        progress=40,
    )  # fmt: skip
    done = await child(
        ada.workspace_id, world.agent.id, world.task_id, "Read the changelog", status="succeeded"
    )

    status, html = await ada.page(ada.w("/tasks"))
    assert status == 200
    found = items(html)
    assert found.parent[world.task_id] is None
    assert {t for t, p in found.parent.items() if p == world.task_id} == {scan.id, plan, done}
    assert found.progress[plan] == "40" and found.progress[world.task_id] == "60"
    # Listed once, under its parent, not again at the top of the list.
    assert html.count(f'data-task="{plan}"') == 1
    assert 'aria-label="Steps of Tidy the dependencies' in html

    # The done tab holds the child, not its running parent: the child shows, its parent named.
    status, html = await ada.page(ada.w("/tasks?view=done"))
    found = items(html)
    assert found.parent == {done: None}
    named = re.search(r"data-parent-named>Step of <a[^>]*href=\"([^\"]+)\"[^>]*>([^<]+)</a>", html)
    assert named is not None
    assert named.group(1).endswith(f"/tasks/{world.task_id}")
    assert named.group(2).startswith("Tidy the dependencies")

    # The parent's own page lists its children the same way, with status and progress.
    status, html = await ada.page(ada.w(f"/tasks/{world.task_id}"))
    children = html.split("data-children", 1)[1].split("</ul>\n", 1)[0]
    assert "Plan the upgrade" in children and 'progress max="100" value="40"' in children
    assert 'data-status="succeeded"' in children and "Scan the repository" in children


async def test_a_task_started_from_the_tasks_page_goes_to_the_chosen_agent(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    away = await Agent.create(
        id=new_id("agent"), workspace_id=ada.workspace_id, name="Sleeper",
        status=AgentStatus.OFFLINE, confirmed_at=world.agent.confirmed_at,
    )  # fmt: skip
    tasks = ada.w("/tasks")
    status, html = await ada.page(tasks)
    form = html.split('data-form="new-task"', 1)[1].split("</form>", 1)[0]
    assert f'value="{world.agent.id}"' in form and away.id not in form  # online agents only

    # Refused: what was typed stays, and nothing is logged.
    before = await last_sequence(ada.workspace_id)
    refused = await ada.post(
        tasks, {"title": "  ", "description": "keep me", "targetAgentId": world.agent.id},
        token_from=tasks,
    )  # fmt: skip
    page = await refused.get_data(as_text=True)
    assert refused.status_code == 422 and "title_required" in page
    assert (
        ">keep me</textarea>" in page
        and '<details class="panel new-task" data-new-task open' in page
    )
    assert await last_sequence(ada.workspace_id) == before

    started = await ada.post(
        tasks,
        {"title": "Update the lock file", "description": "only minor versions",
         "targetAgentId": world.agent.id},
        token_from=tasks,
    )  # fmt: skip
    assert started.status_code == 302
    task = await Task.get(title="Update the lock file")
    assert started.headers["Location"].endswith(f"/tasks/{task.id}")
    assert (task.status, task.target_agent_id, task.created_by, task.description) == (
        "queued", world.agent.id, f"user:{ada.user_id}", "only minor versions",
    )  # fmt: skip
    status, html = await ada.page(started.headers["Location"])
    assert status == 200 and "Task started." in html


async def test_no_new_task_form_without_an_online_agent_nor_for_viewers(browser) -> None:  # type: ignore[no-untyped-def]
    ada, bea = await browser("Ada"), await browser("Bea")
    status, html = await ada.page(ada.w("/tasks"))
    assert "data-no-agent-online" in html and 'data-form="new-task"' not in html

    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    await Membership.create(
        id=new_id("membership"), workspace_id=ada.workspace_id, user_id=bea.user_id,
        role=Role.VIEWER,
    )  # fmt: skip
    status, html = await bea.page(ada.w("/tasks"))
    assert status == 200 and "data-new-task" not in html
    refused = await bea.post(
        ada.w("/tasks"), {"title": "Not mine to ask", "targetAgentId": world.agent.id},
        token_from=ada.w("/tasks"),
    )  # fmt: skip
    assert refused.status_code == 403
    assert not await Task.filter(title="Not mine to ask").exists()


async def test_a_confirmed_agent_is_offered_its_first_task(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    connect = ada.w("/agents/connect")
    created = await ada.post(connect, {}, token_from=connect)
    assert created.status_code == 302
    status, html = await ada.page(connect)
    code = re.search(r"<code data-pairing-code>([^<]+)</code>", html)
    assert code is not None
    agent, _credential = await redeem_pairing_code(
        code.group(1), name="builder", runtime="python", version="1.0",
        capabilities=["tasks"], secret_key=SECRET_KEY,
    )  # fmt: skip
    await Agent.filter(id=agent.id).update(status=AgentStatus.ONLINE)
    confirmed = await ada.post(
        f"{ada.w('/agents')}/{agent.id}/confirm", {"name": "Build bot"}, token_from=connect
    )
    assert confirmed.status_code == 302
    assert confirmed.headers["Location"].endswith(f"/agents/connect?connected={agent.id}")
    status, html = await ada.page(confirmed.headers["Location"])
    assert status == 200 and "Build bot is connected" in html
    assert "Start a task with Build bot" in html
    form = html.split('data-form="new-task"', 1)[1].split("</form>", 1)[0]
    assert f'name="targetAgentId" value="{agent.id}"' in form

    tasks = ada.w("/tasks")
    started = await ada.post(
        tasks, {"title": "Say hello", "targetAgentId": agent.id},
        token_from=confirmed.headers["Location"],
    )  # fmt: skip
    assert started.status_code == 302
    assert (await Task.get(title="Say hello")).target_agent_id == agent.id
