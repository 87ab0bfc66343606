"""The import rules of docs/architecture.md hold, and adding a forbidden arrow breaks them.

``make lint`` runs ``lint-imports`` with the contracts in ``pyproject.toml``; these tests run
the same command on the tree as it is, and on copies with one forbidden import added, so a
contract that stopped biting (a typo in a module name, an option that hides imports inside
functions) fails here instead of passing quietly.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=tree,
        env={**os.environ, "COLUMNS": "200"},  # one line per contract in the report
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy_of_the_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.mo", "static", "templates", "screenshots")
    for part in ("hub", "plugins", "scripts"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_tree_keeps_every_rule() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "broken"),
    [
        # Inside a function, where a late import used to slip an arrow in.
        (
            "hub/core/errors.py",
            "\n\ndef _reach_up() -> None:\n    from hub.web import api  # noqa: F401\n",
            "The core is the domain",
        ),
        (
            "hub/core/store/claims.py",
            "\nfrom hub.core.work import tasks  # noqa: F401,E402\n",
            "The core's rooms, bottom-up",
        ),
        (
            "hub/protocol/actions.py",
            "\nfrom hub.core import errors  # noqa: F401,E402\n",
            "The protocol's wire models import only the protocol",
        ),
        (
            "hub/sdk/backoff.py",
            "\nimport quart  # noqa: F401,E402\n",
            "The SDK needs only itself and the protocol",
        ),
        (
            "hub/channels/wording.py",
            "\nfrom hub.web import pages  # noqa: F401,E402\n",
            "Channels reach the host and the core",
        ),
        (
            "plugins/lap_gateway/frames.py",
            "\nfrom hub.web.api import base  # noqa: F401,E402\n",
            "Plugins reach the host and the core",
        ),
        (
            "hub/coding_agents/credentials.py",
            "\nfrom hub.core import ids  # noqa: F401,E402\n",
            "The coding agents' side runs on the agent's machine",
        ),
        # Under TYPE_CHECKING, where a pair of modules importing each other hides.
        (
            "hub/core/ids.py",
            "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
            "    from hub.core import errors  # noqa: F401\n",
            "No two modules import each other",
        ),
    ],
    ids=[
        "core-web",
        "store-work",
        "protocol-core",
        "sdk-quart",
        "channels-web",
        "plugin-web",
        "coding-agents-core",
        "mutual",
    ],
)
def test_a_forbidden_import_breaks_its_rule(
    tmp_path: Path, module: str, added: str, broken: str
) -> None:
    tree = _copy_of_the_tree(tmp_path)
    if module == "hub/core/ids.py":
        # errors must import ids for the pair to be mutual.
        errors = tree / "hub/core/errors.py"
        errors.write_text(errors.read_text() + "\nfrom hub.core import ids  # noqa: F401,E402\n")
    target = tree / module
    target.write_text(target.read_text() + added)
    result = _lint(tree)
    assert result.returncode != 0, result.stdout
    broken_rules = [line for line in result.stdout.splitlines() if line.endswith(" BROKEN")]
    assert any(line.startswith(broken) for line in broken_rules), result.stdout


def test_transactions_are_opened_through_the_store_alone() -> None:
    """On SQLite the hub has a reader beside the writer, and Tortoise's ``in_transaction()``
    cannot pick between two connections: ``hub.core.store.transactions`` names the writer."""
    allowed = ROOT / "hub/core/store/transactions.py"
    offenders = []
    for part in ("hub", "plugins", "tests", "benchmarks", "scripts"):
        for path in sorted((ROOT / part).rglob("*.py")):
            if path == allowed:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                if any(name.startswith("tortoise.transactions") for name in names):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
