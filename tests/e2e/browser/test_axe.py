"""axe-core finds no serious or critical accessibility violation on any page.

axe-core comes from npm at the version ``scripts/install-axe-core`` pins (``make test``
installs it into ``.cache/axe-core``). Each page of a workspace with something in it is
checked at 1280, 800 and 390 px, in the light and the dark colour scheme, signed in and (login,
signup) signed out.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page

from hub.testing import HubProcess
from tests.e2e.browser.conftest import Person, new_context
from tests.web.pages.world import build_world

REPO = Path(__file__).resolve().parents[3]
INSTALL = REPO / "scripts" / "install-axe-core"
WIDTHS = (1280, 800, 390)
SCHEMES = ("light", "dark")
BLOCKING = ("serious", "critical")

pytestmark = pytest.mark.same_on_every_database


def axe_script() -> str:
    """axe.min.js, installed at the pinned version when it is not there yet."""
    try:
        done = subprocess.run(
            [str(INSTALL)], check=True, capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"axe-core could not be installed ({INSTALL}): {error}")
    return Path(done.stdout.strip()).read_text(encoding="utf-8")


async def violations(page: Page, script: str) -> list[dict[str, Any]]:
    # Evaluated through the browser's debugging protocol, which the pages' CSP (script-src
    # 'self') does not govern: the page stays as strict as people get it.
    await page.evaluate(f"{script}\n;undefined")
    found: list[dict[str, Any]] = await page.evaluate(
        """async () => {
            // label-content-name-mismatch is one of axe's experimental rules, off by default.
            const rules = {'label-content-name-mismatch': {enabled: true}};
            const result = await axe.run(document, {resultTypes: ['violations'], rules});
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary})),
            }));
        }"""
    )
    return [v for v in found if v["impact"] in BLOCKING]


async def check_every_width_and_scheme(
    page: Page, url: str, script: str, failures: list[str]
) -> None:
    for scheme in SCHEMES:
        await page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        for width in WIDTHS:
            await page.set_viewport_size({"width": width, "height": 900})
            response = await page.goto(url)
            assert response is not None
            for found in await violations(page, script):
                failures.append(f"{url} at {width} px, {scheme}: {json.dumps(found, indent=1)}")


async def test_no_serious_or_critical_violation_on_any_page(
    sign_up, orm, hub: HubProcess, chromium: Browser
) -> None:  # type: ignore[no-untyped-def]
    script = axe_script()
    ada: Person = await sign_up("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=("approval_high", "input"))
    pages = [
        ada.url("/inbox"),
        ada.url("/tasks"),
        ada.url(f"/tasks/{world.task_id}"),
        ada.url("/conversations"),
        ada.url(f"/conversations/{world.conversation_id}"),
        ada.url("/agents"),
        ada.url(f"/agents/{world.agent.id}"),
        ada.url("/agents/connect"),
        ada.url("/settings"),
        ada.url("/settings/members"),
        ada.url(f"/interactions/{world.cards['approval_high']}"),
        ada.url(f"/interactions/{world.cards['input']}"),
        f"{hub.url}/no/such/page",
    ]
    failures: list[str] = []
    for url in pages:
        await check_every_width_and_scheme(ada.page, url, script, failures)
    await ada.context.close()

    stranger = await new_context(chromium)
    page = await stranger.new_page()
    for url in (f"{hub.url}/login", f"{hub.url}/signup"):
        await check_every_width_and_scheme(page, url, script, failures)
    await stranger.close()

    print("\n\n".join(failures))
    assert failures == [], f"{len(failures)} page views with serious or critical violations"
