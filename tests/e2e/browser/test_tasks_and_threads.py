"""Tasks and conversations in a browser, at 1280, 800 and 390 px: child tasks under their parent,
a conversation opened at its newest message under a compact composer that follows streamed
text, and a task started from the connect wizard and the tasks page reaching a real agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.work.messages import post_message
from hub.sdk import Agent, Task
from hub.testing import HubProcess
from tests.e2e.browser.conftest import Person
from tests.web.pages.world import build_world

pytestmark = [pytest.mark.same_on_every_database, pytest.mark.timeout(120)]

SIZES = (
    {"width": 1280, "height": 900},
    {"width": 800, "height": 900},
    {"width": 390, "height": 844},
)
COMPOSER_SHARE = 0.15  # the bound: the composer covers at most this of the window
AT_BOTTOM = "() => LineUp.thread.atBottom()"


async def composer_share(page: Page) -> float:
    return float(
        await page.evaluate(
            "() => document.querySelector('.composer').getBoundingClientRect().height / innerHeight"
        )
    )


async def newest_in_view(page: Page) -> bool:
    """The thread's last item is wholly on screen, above the composer."""
    return bool(
        await page.evaluate(
            """() => {
              const items = document.querySelectorAll('[data-thread] > li');
              const last = items[items.length - 1].getBoundingClientRect();
              const composer = document.querySelector('.composer').getBoundingClientRect();
              return last.top >= 0 && last.bottom <= composer.top + 1;
            }"""
        )
    )


async def test_children_nest_and_a_long_thread_opens_at_its_newest_message(sign_up, orm) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    child = new_id("task")
    await append_event(
        ada.workspace_id,
        "task.child_created",
        {"taskId": child, "parentTaskId": world.task_id, "title": "Plan the upgrade",
         "status": "running", "progress": 40},
        actor=f"agent:{world.agent.id}",
    )  # fmt: skip
    for n in range(12):
        await post_message(
            ada.workspace_id, world.conversation_id, f"Note {n}\n" + "A line of detail.\n" * 4,
            by=f"user:{ada.user_id}",
        )  # fmt: skip
    await post_message(
        ada.workspace_id, world.conversation_id, "The newest note", by=f"user:{ada.user_id}"
    )
    page = ada.page
    for size in SIZES:
        await page.set_viewport_size(size)

        await page.goto(ada.url("/tasks"))
        parent = page.locator(f"li[data-task='{world.task_id}']")
        nested = parent.locator(f"li[data-task='{child}']")
        await nested.wait_for()
        assert await nested.locator("progress[value='40']").is_visible()
        assert await nested.locator("[data-status=running]").is_visible()
        parent_box, child_box = await parent.bounding_box(), await nested.bounding_box()
        assert parent_box and child_box and child_box["x"] > parent_box["x"] + 8  # indented
        assert child_box["y"] > parent_box["y"]  # below its parent, not above

        await page.goto(ada.url(f"/conversations/{world.conversation_id}"))
        await page.locator("[data-thread] li", has_text="The newest note").wait_for()
        await page.wait_for_function(AT_BOTTOM)
        assert await page.evaluate("() => scrollY") > 0  # the thread is longer than a screen
        assert await newest_in_view(page), size
        assert await composer_share(page) <= COMPOSER_SHARE, size

        # Typing grows the box, up to the bound; the options stay folded until asked for.
        box = page.locator("#composer-content")
        one_line = (await box.bounding_box() or {"height": 0})["height"]
        await box.fill("first line\nsecond line\nthird\nfourth\nfifth\nsixth\nseventh")
        await box.dispatch_event("input")
        grown = (await box.bounding_box() or {"height": 0})["height"]
        assert grown > one_line
        assert await composer_share(page) <= COMPOSER_SHARE + 0.005, size
        assert not await page.locator("input[name=track]").is_visible()
        await page.locator(".composer-options > summary").click()
        assert await page.locator("input[name=track]").is_visible()
    await ada.context.close()


async def test_a_first_task_and_a_new_one_reach_the_agent_and_text_streams_pinned(
    sign_up, hub: HubProcess, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    page = ada.page
    api = ada.context.request
    base = f"{hub.url}/api/v1/workspaces/{ada.workspace_id}"

    # Pairing through the wizard; its last step offers the agent a first task.
    await page.goto(ada.url("/agents/connect"))
    await page.get_by_role("button", name="Create a one-time code").click()
    code = (await page.locator("[data-pairing-code]").inner_text()).strip()
    await page.wait_for_function("() => document.body.dataset.live === 'live'")

    received: asyncio.Queue[str] = asyncio.Queue()
    wrote_first, go_on = asyncio.Event(), asyncio.Event()
    agent = Agent(hub.url, pairing_code=code, name="Writer", state_dir=tmp_path / "agent")

    @agent.on_task
    async def work(task: Task) -> None:
        await received.put(task.title)
        await task.accept()
        if task.title.startswith("Write"):
            async with task.stream_message() as stream:
                await stream.write("Draft:\n" + "a line being written\n" * 30)
                wrote_first.set()
                await go_on.wait()
                await stream.write("the end of the note")
        await task.succeed("done")

    await agent.start()
    try:
        await page.locator("[data-step=confirm]").wait_for()
        await page.fill("#agent-name", "Writer")
        await page.get_by_role("button", name="Confirm name").click()
        step = page.locator("[data-step=connected]")
        await step.get_by_text("Start a task with Writer").wait_for()
        await step.get_by_label("What should it do?").fill("Say hello")
        await step.get_by_role("button", name="Start the task").click()
        await page.wait_for_url("**/tasks/*")
        assert await asyncio.wait_for(received.get(), 15) == "Say hello"
        await page.locator("[data-live=task] [data-status=succeeded]").first.wait_for()

        # The tasks page's own "New task", at phone width.
        await page.set_viewport_size(SIZES[1])
        await page.goto(ada.url("/tasks"))
        await page.get_by_text("New task", exact=True).click()
        await page.get_by_label("Agent", exact=True).select_option(label="Writer")
        await page.get_by_label("What should it do?").fill("Tidy the lock file")
        await page.get_by_role("button", name="Start the task").click()
        await page.wait_for_url("**/tasks/*")
        assert await asyncio.wait_for(received.get(), 15) == "Tidy the lock file"
        await page.locator("[data-live=task] [data-status=succeeded]").first.wait_for()

        # Streamed text stays in view while the person is at the end of the thread ...
        agents = (await (await api.get(f"{base}/agents")).json())["agents"]
        conversation = await (
            await api.post(
                f"{base}/conversations", data={"title": "Notes", "agentIds": [agents[0]["id"]]}
            )
        ).json()
        for n in range(8):
            await api.post(
                f"{base}/conversations/{conversation['id']}/messages",
                data={"content": f"Earlier note {n}\n" + "detail\n" * 4},
            )
        await page.goto(ada.url(f"/conversations/{conversation['id']}"))
        await page.wait_for_function("() => document.body.dataset.live === 'live'")
        await page.wait_for_function(AT_BOTTOM)
        posted = await api.post(
            f"{base}/conversations/{conversation['id']}/messages",
            data={"content": "Write me a note", "trackAsTask": True},
        )
        assert posted.status == 201, await posted.text()
        await asyncio.wait_for(wrote_first.wait(), 15)
        streaming = page.locator("[data-streaming]")
        await streaming.filter(has_text="a line being written").wait_for()
        await page.wait_for_function(AT_BOTTOM)
        assert await newest_in_view(page) or await page.evaluate(AT_BOTTOM)

        # ... and never pulls back a person who scrolled up to read.
        await page.evaluate("() => window.scrollTo(0, 0)")
        go_on.set()
        await streaming.filter(has_text="the end of the note").wait_for()
        assert await page.evaluate("() => scrollY") == 0
        await page.locator("[data-message]:not([data-streaming])", has_text="the end").wait_for()
        assert await page.evaluate("() => scrollY") == 0
    finally:
        await agent.close()
        await ada.context.close()
