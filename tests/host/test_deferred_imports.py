"""Big libraries few hubs use are imported when first needed, on a thread: a hub is built
without the MCP SDK or pywebpush (every test of ``/mcp/`` over HTTP and of Web Push goes
through the first request or push that loads them)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.host.deferred_imports import import_off_the_loop

BUILD_THE_APP = """
import sys
from hub.host.app import create_app
from plugins.mcp_server import EXTENSION_KEY

app = create_app()
assert EXTENSION_KEY in app.extensions, "the /mcp/ endpoint is not installed"
print(sorted({name.split(".")[0] for name in sys.modules} & {"mcp", "pywebpush", "aiohttp"}))
"""


@pytest.mark.same_on_every_database
def test_the_hub_is_built_without_the_mcp_sdk_or_pywebpush(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LINEUP_DATA_DIR": str(tmp_path),
        "LINEUP_DATABASE_URL": f"sqlite://{tmp_path / 'hub.sqlite3'}",
        "LINEUP_SECRET_KEY": "loading-secret-" + "x" * 32,
    }
    built = subprocess.run(
        [sys.executable, "-c", BUILD_THE_APP],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.strip() == "[]"


@pytest.fixture
def a_module(tmp_path: Path) -> Iterator[str]:
    """A module not imported yet that notes the thread importing it."""
    name = "deferred_probe"
    (tmp_path / f"{name}.py").write_text(
        "import threading\nIMPORTED_ON = threading.current_thread().name\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


@pytest.mark.same_on_every_database
async def test_the_first_import_runs_on_a_thread_and_later_ones_cost_nothing(
    a_module: str,
) -> None:
    await import_off_the_loop(a_module)
    first = sys.modules[a_module]
    assert threading.current_thread().name != first.IMPORTED_ON

    await import_off_the_loop(a_module)
    assert sys.modules[a_module] is first  # imported once
