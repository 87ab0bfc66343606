"""Screenshots of the UI at 1280, 800 and 390 px for docs/screenshots (``make screenshots``).

Starts a hub on a throwaway SQLite database, sets a scene through the core (an agent, a
conversation, a running task with a pending high-risk approval), signs a person in and
captures the inbox, the task with its pending card, and the agents page at each width.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from playwright.async_api import async_playwright

from hub.core.people.accounts import create_user
from hub.testing import HubProcess, TestDatabases, opened, temporary_directory
from tests.e2e.browser.conftest import CHROMIUM, CHROMIUM_ARGS, PASSWORD
from tests.web.pages.world import build_world

WIDTHS = (1280, 800, 390)
EMAIL = "ada@example.com"


async def capture(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with temporary_directory() as root:
        databases = TestDatabases(root)
        url = await databases.create()
        async with opened(url):
            user, workspace = await create_user(EMAIL, PASSWORD, "Ada")
            world = await build_world(workspace.id, user.id, kinds=("approval_high",))
        with HubProcess(url, root / "hub") as hub:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
                )
                for width in WIDTHS:
                    context = await browser.new_context(
                        viewport={"width": width, "height": 844 if width < 640 else 900},
                        locale="en-GB",
                        timezone_id="Europe/Berlin",
                    )
                    page = await context.new_page()
                    await page.goto(f"{hub.url}/login")
                    await page.fill("#email", EMAIL)
                    await page.fill("#password", PASSWORD)
                    await page.click("button[type=submit]")
                    await page.wait_for_url("**/inbox")
                    for name, path in (
                        ("inbox", "/inbox"),
                        ("task-pending-card", f"/tasks/{world.task_id}"),
                        ("agents", "/agents"),
                    ):
                        await page.goto(f"{hub.url}/w/{workspace.id}{path}")
                        await page.wait_for_function("() => document.body.dataset.live === 'live'")
                        target = out / f"{name}-{width}.png"
                        await page.screenshot(path=str(target), full_page=False)
                        written.append(target)
                    await context.close()
                await browser.close()
        await databases.drop(url)
    return written


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    for path in asyncio.run(capture(out)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
