"""The whole story of issue 4 in a browser, with the real simulated agent (spec §12.3, §15).

Sign up → connect ``lineup agent demo`` through the wizard → create a tracked task from the
composer → watch its progress change without a reload → answer the high-risk approval in
the inbox with the keyboard only → see the task succeed with its artifact → close the tab,
open a new one: everything is still there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Page

from hub.testing import HubProcess
from tests.e2e.browser.conftest import PASSWORD, new_context

STEP_PAUSE_S = "1.5"
# Records browser notifications instead of showing them, with the tab in the background.
NOTIFICATIONS = """
window.shown = [];
window.Notification = class {
  constructor(title, options) { window.shown.push({ title, body: (options || {}).body }); }
  addEventListener() {}
  static get permission() { return "granted"; }
  static requestPermission() { return Promise.resolve("granted"); }
};
document.hasFocus = () => false;
"""  # long enough to see 25% before 50% on a busy machine


@contextlib.contextmanager
def demo_agent(hub: HubProcess, code: str, home: Path) -> Iterator[subprocess.Popen[bytes]]:
    home.mkdir(parents=True, exist_ok=True)
    log = open(home / "demo.log", "wb")  # noqa: SIM115 - the child writes to it
    process = subprocess.Popen(
        [sys.executable, "-m", "hub.cli", "agent", "demo", "--hub", hub.url, "--pair", code,
         "--pause", STEP_PAUSE_S, "--state-dir", str(home), "--name", "Demo agent"],
        env={**os.environ, "LINEUP_DATA_DIR": str(home), "LINEUP_SECRET_KEY": "d" * 40},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    log.close()
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        # Shown by pytest only when the test fails: what the agent saw, then the hub.
        print((home / "demo.log").read_text(errors="replace"))
        print(hub.log()[-5000:])


async def tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until ``selector`` has the focus (bounded)."""
    for _ in range(limit):
        await page.keyboard.press("Tab")
        if await page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


async def card_status(page: Page, hub: HubProcess, workspace: str, card: str) -> str:
    response = await page.context.request.get(
        f"{hub.url}/api/v1/workspaces/{workspace}/interactions/{card}"
    )
    return str((await response.json())["status"])


async def test_sign_up_connect_the_demo_agent_and_see_the_task_through(
    hub: HubProcess, chromium, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    context = await new_context(chromium, 1280)
    await context.add_init_script(NOTIFICATIONS)
    page = await context.new_page()

    # Sign up: it leads straight to connecting an agent.
    await page.goto(f"{hub.url}/signup")
    await page.fill("#display_name", "Ada")
    await page.fill("#email", "ada@example.com")
    await page.fill("#password", PASSWORD)
    await page.click("button[type=submit]")
    await page.wait_for_url("**/agents/connect")
    workspace = page.url.split("/w/")[1].split("/")[0]

    # The wizard: a one-time code and the command to copy.
    await page.get_by_role("button", name="Create a one-time code").click()
    command = (await page.locator("#pair-command").inner_text()).strip()
    assert command.startswith(f"lineup agent demo --hub {hub.url} --pair ")
    code = command.rsplit(" ", 1)[1]
    await page.locator("[data-waiting]").wait_for()
    await page.wait_for_function("() => document.body.dataset.live === 'live'")

    with demo_agent(hub, code, tmp_path / "agent") as agent:
        # "Waiting for your agent…" turns into "confirm its name", live.
        await page.locator("[data-step=confirm]").wait_for()
        await page.fill("#agent-name", "Build bot")
        await page.get_by_role("button", name="Confirm name").click()
        # The wizard's last step offers a first task; this story starts one in a conversation.
        await page.locator(
            "[data-step=connected]", has_text="Start a task with Build bot"
        ).wait_for()
        await page.get_by_role("link", name="See all agents").click()
        await page.wait_for_url("**/agents")
        await (
            page.locator("[data-agent]", has_text="Build bot")
            .locator("[data-status=online]")
            .wait_for()
        )

        # A conversation with it, and a tracked task from the composer.
        await page.goto(f"{hub.url}/w/{workspace}/conversations")
        await page.fill("#conversation-title", "Dependencies")
        await page.get_by_role("button", name="Start", exact=True).click()
        await page.wait_for_url("**/conversations/*")
        await page.fill("#composer-content", "Tidy the project's dependencies and plan it")
        await page.locator(".composer-options > summary").click()  # folded by default
        await page.check("input[name=track]")
        await page.get_by_role("button", name="Send", exact=True).click()
        await page.locator(".notice", has_text="tracked as a task").wait_for()

        # Progress changes in the detail pane without a reload.
        await page.evaluate("() => { window.sameDocument = true; }")
        panel = page.locator("[data-live=task-panel]")
        await panel.locator("progress[value='25']").wait_for()
        await panel.locator("progress[value='50']").wait_for()
        await panel.locator("[data-status=waiting_for_human]").first.wait_for()
        assert await page.evaluate("() => window.sameDocument === true")
        # Told in the background, with the card's title and nothing a person typed.
        assert await page.evaluate("() => window.shown") == [
            {
                "title": "An agent is waiting for you",
                "body": "Apply the dependency upgrades to production?",
            }
        ]
        task_href = await panel.get_by_role("link", name="Open the task").get_attribute("href")
        assert task_href is not None

        # The high-risk approval, from the inbox, keyboard only.
        await page.goto(f"{hub.url}/w/{workspace}/inbox")
        card = page.locator("[data-card]").first
        await card.wait_for()
        card_id = await card.get_attribute("data-card")
        assert card_id and "High risk" in await card.inner_text()
        await page.focus("body")
        await tab_to(page, "button[name=optionId][value=approve]")
        await page.keyboard.press("Enter")
        await page.locator(".confirm-step").wait_for()
        # Focus sits on the heading: a second stray Enter decides nothing.
        await page.keyboard.press("Enter")
        assert await card_status(page, hub, workspace, card_id) == "pending"
        await tab_to(page, "input[name=confirm]")
        await page.keyboard.press("Space")
        await tab_to(page, ".confirm-step button[type=submit]")
        await page.keyboard.press("Enter")
        await page.locator(".notice", has_text="sent to the agent").wait_for()
        assert await card_status(page, hub, workspace, card_id) == "resolved"

        # The task succeeds, with its artifact, live on its page.
        await page.goto(hub.url + task_href)
        task = page.locator("[data-live=task]")
        await task.locator("[data-status=succeeded]").first.wait_for(timeout=30_000)
        await task.locator("[data-artifact]", has_text="upgrade-plan.md").wait_for()
        assert await page.locator(".outcome", has_text="Decided by Ada").count() == 1
        assert agent.poll() is None  # still running, waiting for more work

    # Close the tab; a new one shows the same, from the server.
    await page.close()
    again = await context.new_page()
    await again.goto(hub.url + task_href)
    assert await again.locator("[data-live=task] [data-status=succeeded]").count() >= 1
    assert await again.locator("[data-artifact]", has_text="upgrade-plan.md").count() == 1
    await again.goto(f"{hub.url}/w/{workspace}/conversations")
    await again.get_by_role("link", name="Dependencies").click()
    await again.locator("[data-thread]", has_text="Done:").wait_for()
    await again.goto(f"{hub.url}/w/{workspace}/inbox")
    assert await again.locator("[data-section=done]", has_text="Tidy the project").count() == 1
    await context.close()


pytestmark = pytest.mark.timeout(180)
