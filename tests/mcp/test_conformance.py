"""The official MCP conformance suite against a real hub's ``/mcp/``, on three revisions.

``@modelcontextprotocol/conformance`` (npm, pinned by ``scripts/install-mcp-conformance``,
which ``make test`` runs; Node.js 22 beside it) acts as an MCP client and checks the
server's answers and every message on the wire against the specification's schema. The
suite cannot send a credential, so it talks to a loopback proxy that adds the agent's
bearer token (``bearer_proxy.py``). The proxy is the hub's public address
(``LINEUP_PUBLIC_URL``), as a reverse proxy in front of a hub would be: the suite's
``Origin`` checks expect its own address to be the server's.

Many of the suite's scenarios call its own fixture tools, prompts and resources
(``test_image_content``, ``test://static-text``, ...), which no real server has.
``conformance-baseline.yml`` lists exactly those, each with its reason; the suite exits
non-zero on any other failure, and also when a listed scenario starts passing, so the
list cannot go stale.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.testing import free_port
from tests.mcp.bearer_proxy import bearer_proxy
from tests.mcp.conftest import confirm_paired_agent, paired_credential
from tests.sdk.live import LiveHub, live_hub

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install-mcp-conformance"
BASELINE = Path(__file__).with_name("conformance-baseline.yml")
RUN_TIMEOUT_S = 420

pytestmark = [pytest.mark.same_on_every_database, pytest.mark.timeout(RUN_TIMEOUT_S + 120)]


def conformance_suite() -> tuple[str, str]:
    """Node.js 22 and the suite's entry script, installed at the pinned versions."""
    try:
        done = subprocess.run(
            [str(INSTALL)], check=True, capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        pytest.fail(f"the MCP conformance suite could not be installed ({INSTALL}): {error}")
    node, entry = done.stdout.split()
    return node, entry


@pytest.fixture
def proxy_port() -> int:
    return free_port()


@pytest.fixture
async def hub(db: str, tmp_path: Path, proxy_port: int) -> AsyncIterator[LiveHub]:
    public = f"http://127.0.0.1:{proxy_port}"
    async with live_hub(db, tmp_path / "hub", LINEUP_PUBLIC_URL=public) as running:
        yield running


# The tasks extension's scenarios are not on any revision's timeline (extensions are
# optional), so each is run on its own at 2026-07-28, the wire the extension is for.
TASKS_SCENARIOS = (
    "tasks-capability-negotiation",
    "tasks-lifecycle",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28", "tasks"])
async def test_the_conformance_suite_passes_but_for_its_fixture_scenarios(
    hub: LiveHub, tmp_path: Path, proxy_port: int, revision: str
) -> None:
    node, entry = conformance_suite()
    credential = await paired_credential(hub, tmp_path / "agent")
    await confirm_paired_agent(hub, "Conformance suite")
    async with bearer_proxy(hub.url, credential, proxy_port) as proxy:
        suite = [node, entry, "server", "--url", f"{proxy}/mcp/"]
        suite += ["--expected-failures", str(BASELINE), "--output-dir", str(tmp_path / "out")]
        if revision == "tasks":
            runs = [
                [*suite, "--scenario", s, "--spec-version", "2026-07-28", "--force"]
                for s in TASKS_SCENARIOS
            ]
        else:
            runs = [[*suite, "--suite", "all", "--spec-version", revision]]
        reports = [await _run(command, tmp_path) for command in runs]
    failed = [report for code, report in reports if code != 0]
    assert not failed, f"conformance {revision} failed:\n" + "\n".join(failed)[-12_000:]


async def _run(command: list[str], cwd: Path) -> tuple[int, str]:
    """The suite's exit code and the end of its report (its summary)."""
    suite = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        output, _ = await asyncio.wait_for(suite.communicate(), RUN_TIMEOUT_S)
    finally:
        if suite.returncode is None:
            suite.kill()
            await suite.wait()
    report = output.decode(errors="replace")
    summary = report.find("=== SUMMARY ===")
    assert suite.returncode is not None
    return suite.returncode, report[summary:] if summary >= 0 else report[-4000:]
