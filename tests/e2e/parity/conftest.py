"""One stage for the whole suite (``tests.e2e.parity.stage``): a hub process, its peers,
Chromium, a Jupyter kernel and an agent, shared by every test of this package (each costs
seconds to start; every card has a title of its own, so tests do not see each other's) and
stopped at its end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from hub.testing import TestDatabases
from tests.e2e.browser.conftest import CHROMIUM
from tests.e2e.parity.stage import Stage, staged
from tests.e2e.parity.surfaces import SURFACES, Surface

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Chromium is not installed (make test installs it)"
)


@pytest_asyncio.fixture(loop_scope="package", scope="package")
async def stage(
    test_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Stage]:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (make test installs it)")
    async with staged(test_databases, Path(tmp_path_factory.mktemp("parity"))) as ready:
        yield ready


@pytest_asyncio.fixture(loop_scope="package", scope="package")
async def surfaces(stage: Stage) -> dict[str, Surface]:
    built = {name: surface(stage) for name, surface in SURFACES.items()}
    for surface in built.values():
        await surface.prepared()
    return built
