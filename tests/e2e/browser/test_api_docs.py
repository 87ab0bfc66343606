"""/api/docs works on a hub with no way out: Swagger UI comes from the hub itself."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.async_api import Browser

from hub.testing import HubProcess
from tests.e2e.browser.conftest import new_context


async def test_the_docs_page_renders_from_the_hub_alone(hub: HubProcess, chromium: Browser) -> None:
    context = await new_context(chromium)
    page = await context.new_page()
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    await page.goto(hub.url + "/api/docs")
    await page.get_by_text("/api/v1/workspaces/{ws}/tasks", exact=True).first.wait_for()
    assert await page.get_by_text("LineUp Hub API").count() > 0
    assert hosts == {urlsplit(hub.url).netloc}
    await context.close()
