"""Screenshots of the UI at 1280, 800 and 390 px for docs/screenshots (``make screenshots``).

Starts a hub on a throwaway SQLite database, sets a scene through the core (an agent, a
conversation, a running task with three cards waiting: a high-risk migration with its exact
action, a low-risk approval and a choice), signs a person in and captures the inbox, a card
opened from it, the task, the agents page and Settings at each width, in the light theme,
and the inbox and its card again in the dark one.
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
            world = await build_world(
                workspace.id, user.id, kinds=("approval_action", "approval_low", "choice")
            )
        with HubProcess(url, root / "hub") as hub:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
                )
                shots = [(width, "light") for width in WIDTHS] + [(1280, "dark"), (390, "dark")]
                for width, scheme in shots:
                    context = await browser.new_context(
                        viewport={"width": width, "height": 844 if width < 640 else 900},
                        locale="en-GB",
                        timezone_id="Europe/Berlin",
                        color_scheme=scheme,  # type: ignore[arg-type]
                    )
                    page = await context.new_page()
                    await page.goto(f"{hub.url}/login")
                    await page.fill("#email", EMAIL)
                    await page.fill("#password", PASSWORD)
                    await page.click("button[type=submit]")
                    await page.wait_for_url("**/inbox")
                    pages = [
                        ("inbox", "/inbox"),
                        ("inbox-card", f"/inbox?card={world.cards['approval_action']}"),
                        ("task-pending-card", f"/tasks/{world.task_id}"),
                        ("agents", "/agents"),
                        ("settings", "/settings"),
                    ]
                    for name, path in pages[:2] if scheme == "dark" else pages:
                        await page.goto(f"{hub.url}/w/{workspace.id}{path}")
                        await page.wait_for_function("() => document.body.dataset.live === 'live'")
                        suffix = "-dark" if scheme == "dark" else ""
                        target = out / f"{name}-{width}{suffix}.png"
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
