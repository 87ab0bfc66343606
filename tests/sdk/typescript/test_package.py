"""The TypeScript SDK as a package: its wire types are the protocol's, it type-checks and
builds to JavaScript with declarations, and its unit suites pass on Node 22.

The live suites (a real hub) are in ``test_live.py``; none of these needs a database, so
they run in the SQLite pass only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hub.protocol.schema import protocol_schema
from tests.sdk.typescript.node import PACKAGE, REPO, passed, run_node, toolchain

GENERATED = PACKAGE / "src" / "protocol.generated.ts"
EXAMPLE = REPO / "examples" / "typescript"

pytestmark = [pytest.mark.same_on_every_database, pytest.mark.timeout(180)]


def test_the_wire_types_are_generated_from_the_protocol_models() -> None:
    """`make protocol-types` writes them; a model changed without it fails here."""
    node, _ = toolchain()
    schema = subprocess.run(
        [sys.executable, "-m", "hub.protocol.schema"],
        capture_output=True,
        check=True,
        cwd=REPO,
    ).stdout
    generated = subprocess.run(
        [node, "scripts/generate-types.ts"],
        input=schema,
        capture_output=True,
        check=True,
        cwd=PACKAGE,
        timeout=60,
    ).stdout.decode()
    assert generated == GENERATED.read_text(encoding="utf-8"), (
        "sdk/typescript/src/protocol.generated.ts is stale: run `make protocol-types`"
    )
    # Every frame type of the protocol has its payload type.
    definitions = protocol_schema()["$defs"]
    for frames in ("UplinkPayloads", "DownlinkPayloads"):
        for kind in definitions[frames]["properties"]:
            assert json.dumps(kind) in generated or f"  {kind}:" in generated, kind


def test_the_package_type_checks_and_builds_to_javascript_with_declarations(
    tmp_path: Path,
) -> None:
    node, tsc = toolchain()
    check = subprocess.run(
        [node, tsc, "-p", "tsconfig.json"], capture_output=True, text=True, cwd=PACKAGE, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr
    out = tmp_path / "dist"
    build = subprocess.run(
        [node, tsc, "-p", "tsconfig.build.json", "--outDir", str(out)],
        capture_output=True,
        text=True,
        cwd=PACKAGE,
        timeout=120,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    assert (out / "index.js").exists() and (out / "index.d.ts").exists()
    # The built JavaScript runs as it is published: ESM, no `.ts` import left in it.
    assert not [p for p in out.glob("*.js") if '.ts"' in p.read_text()]
    script = (
        f"const sdk = await import({json.dumps((out / 'index.js').as_uri())});"
        "console.log(JSON.stringify(Object.keys(sdk).sort()))"
    )
    names = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert names.returncode == 0, names.stderr
    exported = set(json.loads(names.stdout))
    assert {"Agent", "Task", "Resolution", "ProposedAction", "actionHash", "HubRefused"} <= exported


def test_the_sources_are_formatted() -> None:
    """Prettier (pinned), as ruff format for the Python: the style is a tool's, not a taste."""
    node, _ = toolchain()
    prettier = PACKAGE / "node_modules" / "prettier" / "bin" / "prettier.cjs"
    check = subprocess.run(
        [
            node,
            str(prettier),
            "--check",
            "src",
            "test",
            "scripts",
            str(EXAMPLE / "shell-approval.ts"),
        ],
        capture_output=True,
        text=True,
        cwd=PACKAGE,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr + "\nrun prettier --write on them"


def test_the_example_type_checks_against_the_published_declarations() -> None:
    node, tsc = toolchain()
    if not (EXAMPLE / "node_modules" / "@lineup-hub" / "sdk").exists():
        raise AssertionError("the example has no SDK linked: run `make typescript-sdk`")
    check = subprocess.run(
        [node, tsc, "-p", "tsconfig.json"], capture_output=True, text=True, cwd=EXAMPLE, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr


async def test_the_unit_suites_pass_on_node_22() -> None:
    toolchain()
    status, output = await run_node(
        ["--test", "--test-reporter=spec", "test/unit/*.test.ts"], timeout_s=120
    )
    counts = passed(output)
    assert status == 0 and counts.get("fail") == 0 and counts.get("pass", 0) >= 30, output


def test_package_json_pins_its_tools_and_needs_nothing_at_run_time() -> None:
    manifest = json.loads((PACKAGE / "package.json").read_text())
    assert "dependencies" not in manifest, "the SDK has no runtime dependencies"
    assert all(version[0].isdigit() for version in manifest["devDependencies"].values())
    assert manifest["type"] == "module" and manifest["engines"]["node"] == ">=22"
