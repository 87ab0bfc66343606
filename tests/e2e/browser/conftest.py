"""Headless Chromium (Debian's, at /usr/bin/chromium) driving a hub in its own process.

``make test`` installs Chromium when it is missing; without it these tests are skipped
with the reason. Each test gets a fresh database, its own ``lineup serve`` and its own
browser, and every one of them is stopped at the end whatever happened.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from hub.testing import HubProcess, opened

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
PASSWORD = "correct horse battery"
WAIT_MS = 15_000  # every wait is bounded; none is a measurement
_numbers = itertools.count()

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (make test installs it)"
)


@pytest.fixture
def hub(database_url: str, tmp_path: Path) -> Iterator[HubProcess]:
    # The default heartbeat (25 s): agents seeded "online" stay so for the whole test.
    with HubProcess(database_url, tmp_path / "hub") as process:
        try:
            yield process
        finally:
            print(process.log()[-4000:])  # shown by pytest only when the test fails


@pytest.fixture
async def chromium() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (make test installs it)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Person:
    context: BrowserContext
    page: Page
    hub: HubProcess
    email: str
    user_id: str
    workspace_id: str

    def url(self, path: str) -> str:
        return f"{self.hub.url}/w/{self.workspace_id}{path}"


async def new_context(chromium: Browser, width: int = 1280, **options: Any) -> BrowserContext:
    context = await chromium.new_context(
        viewport={"width": width, "height": 900}, locale="en-GB", **options
    )
    context.set_default_timeout(WAIT_MS)
    return context


@pytest.fixture
def sign_up(hub: HubProcess, chromium: Browser):  # type: ignore[no-untyped-def]
    """A person signed up through the JSON API in a fresh browser context."""

    async def make(name: str = "Ada", width: int = 1280, **options: Any) -> Person:
        context = await new_context(chromium, width, **options)
        email = f"{name.lower()}{next(_numbers)}@example.com"
        response = await context.request.post(
            f"{hub.url}/api/v1/auth/register",
            data={"email": email, "password": PASSWORD, "displayName": name},
        )
        assert response.status == 201, await response.text()
        body = await response.json()
        page = await context.new_page()
        return Person(context, page, hub, email, body["userId"], body["workspaceId"])

    return make


@pytest.fixture
async def orm(database_url: str) -> AsyncIterator[str]:
    """The same database the hub serves, opened here too, to set a scene through the core."""
    async with opened(database_url):
        yield database_url
