"""Node.js 22 and the TypeScript SDK's toolchain, as the tests run them.

``make test`` installs both first (``make node typescript-sdk``: Node from npm's ``node``
package, the SDK's pinned dev dependencies with ``npm ci``); a test run without them fails
saying so, rather than skipping what it was meant to prove.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "sdk" / "typescript"
NODE = REPO / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"
TSC = PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"
NODE_VERSION = re.compile(r"^v22\.")


def node() -> str:
    """The Node 22 binary ``scripts/install-node`` put in place."""
    if not NODE.exists():
        raise AssertionError(f"no Node.js 22 at {NODE}: run `make node` (scripts/install-node)")
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True)
    assert NODE_VERSION.match(version.stdout), version.stdout
    return str(NODE)


def toolchain() -> tuple[str, str]:
    """Node and the SDK's pinned TypeScript compiler."""
    if not TSC.exists():
        raise AssertionError(f"no {TSC}: run `make typescript-sdk` (npm ci in {PACKAGE})")
    return node(), str(TSC)


def node_environment(**extra: str) -> dict[str, str]:
    # The agents' state files go where each test says, never into the user's home.
    return {**os.environ, "NODE_NO_WARNINGS": "1", **extra}


async def run_node(
    arguments: list[str], *, timeout_s: float, cwd: Path = PACKAGE, **env: str
) -> tuple[int, str]:
    """Run node with ``arguments``; its exit status and whole output. Bounded: past
    ``timeout_s`` the process group is killed and the output so far returned."""
    process = await asyncio.create_subprocess_exec(
        node(),
        *arguments,
        cwd=cwd,
        env=node_environment(**env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    try:
        output = await asyncio.wait_for(process.stdout.read(), timeout_s)
        status = await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        rest = await process.stdout.read()
        return -1, rest.decode(errors="replace") + f"\n(killed after {timeout_s:.0f} s)"
    return status, output.decode(errors="replace")


def passed(output: str) -> dict[str, int]:
    """The counts of node --test's summary (tests, pass, fail, skipped, todo, ...)."""
    return {name: int(n) for name, n in re.findall(r"^ℹ (\w+) (\d+)$", output, re.M)}
