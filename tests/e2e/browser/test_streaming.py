"""Text an agent is still writing streams into the thread as it comes (``message.delta``),
as text: markup in it stays inert, and live redraws in between do not lose it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hub.sdk import Agent, Task
from hub.testing import HubProcess
from tests.e2e.browser.conftest import Person

FIRST = "Hello <img src=x onerror=alert(1)>"
SECOND = " and <script>alert(2)</script> bye"


async def test_streamed_text_appears_live_and_inert(
    sign_up, hub: HubProcess, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("Ada")
    api = ada.context.request
    base = f"{hub.url}/api/v1/workspaces/{ada.workspace_id}"
    code = (await (await api.post(f"{base}/pairing-codes")).json())["code"]

    go_on = asyncio.Event()
    agent = Agent(hub.url, pairing_code=code, name="Streamer", state_dir=tmp_path / "agent")

    @agent.on_task
    async def write_slowly(task: Task) -> None:
        await task.accept()
        async with task.stream_message() as stream:
            await stream.write(FIRST)
            await task.progress(10, "still writing")  # a redraw while text streams
            await go_on.wait()
            await stream.write(SECOND)
        await task.succeed("written")

    await agent.start()
    try:
        agents = (await (await api.get(f"{base}/agents")).json())["agents"]
        agent_id = agents[0]["id"]
        await api.post(f"{base}/agents/{agent_id}/confirm", data={"name": "Streamer"})
        conversation = await (
            await api.post(f"{base}/conversations", data={"title": "Notes", "agentIds": [agent_id]})
        ).json()
        dialogs: list[str] = []
        page = ada.page
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await page.goto(ada.url(f"/conversations/{conversation['id']}"))
        await page.wait_for_function("() => document.body.dataset.live === 'live'")

        response = await api.post(
            f"{base}/conversations/{conversation['id']}/messages",
            data={"content": "Write me a note", "targetAgentId": agent_id, "trackAsTask": True},
        )
        assert response.status == 201, await response.text()
        streaming = page.locator("[data-streaming]")
        await streaming.filter(has_text=FIRST).wait_for()
        await page.locator("[data-live=task-panel] progress[value='10']").wait_for()
        assert await streaming.count() == 1  # carried over the redraw, not lost or doubled
        go_on.set()
        # The stored message replaces the streamed one: the whole text, once.
        stored = page.locator("[data-message]:not([data-streaming])", has_text=FIRST + SECOND)
        await stored.wait_for()
        assert await page.locator("[data-streaming]").count() == 0
        assert await page.locator("[data-thread] img, [data-thread] script").count() == 0
        assert dialogs == []
    finally:
        await agent.close()
        await ada.context.close()
