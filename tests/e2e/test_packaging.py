"""The hub as it ships: the wheel, installed as the Dockerfile installs it, serving.

These machines cannot pull container images, so the image is reproduced step by step from
the Dockerfile itself (its extras, its environment, its entrypoint and its healthcheck are
read from the file, so the two cannot drift): the wheel is built from the files the image
copies, installed into a fresh venv under constraints.txt, and started with the image's
entrypoint against the run's real PostgreSQL. Another fresh venv gets what an agent's
machine gets, the package without the server extra, and must still run ``lineup agent``.

The one difference from the image: where pip finds the dependencies. The image asks PyPI;
here pip gets ``--no-index --find-links`` on wheels packed from this test environment
(tests/e2e/wheelhouse.py), so the install is offline, and it still goes through
constraints.txt, which must then match what the tests run with. The wheel is built with this
environment's setuptools (``--no-build-isolation``) for the same reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from hub.testing import free_port
from tests.e2e.wheelhouse import build_wheelhouse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
CONSTRAINTS = ROOT / "constraints.txt"
# Building and installing a venv takes a while on a shared machine; everything else is quick.
INSTALL_TIMEOUT_S = 240
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT_S + 120)
# The Dockerfile's `pip wheel --no-deps`, with this environment's setuptools.
BUILD_OFFLINE = ["--no-deps", "--no-build-isolation"]


def _dockerfile_json(instruction: str) -> list[str]:
    """The exec-form arguments of ``instruction`` (``ENTRYPOINT``, ``CMD``, the healthcheck's)."""
    match = re.search(rf"^{instruction}\s+(\[.*\])\s*$", DOCKERFILE, re.MULTILINE)
    assert match, f"no exec-form {instruction} in the Dockerfile"
    return list(json.loads(match.group(1)))


def _dockerfile_env() -> dict[str, str]:
    block = re.search(r"^ENV ((?:.*\\\n)*.*)$", DOCKERFILE, re.MULTILINE)
    assert block, "no ENV in the Dockerfile"
    return dict(re.findall(r"(\w+)=(\S+)", block.group(1)))


EXTRAS = re.search(r"^ARG EXTRAS=(\S+)$", DOCKERFILE, re.MULTILINE).group(1)  # type: ignore[union-attr]


def _run(argv: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False, **kwargs
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done


def _fresh_venv(where: Path) -> Path:
    _run([sys.executable, "-m", "venv", str(where)])
    return where / "bin"


def _without_the_test_venv() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))
    )
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built as the Dockerfile's first stage builds it: from what it copies."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for package in ("hub", "plugins"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    wheels = tmp_path_factory.mktemp("wheels")
    _run(
        [sys.executable, "-m", "pip", "wheel", *BUILD_OFFLINE, "--wheel-dir", wheels, "."],
        cwd=source,
        env=_without_the_test_venv(),
    )
    (built,) = wheels.glob("lineup_hub-*.whl")
    return built


@dataclass
class Installed:
    bin: Path

    def lineup(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "lineup"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=_without_the_test_venv(),
            **kwargs,
        )  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the image's extras need, as installed here (a superset of the SDK's needs)."""
    house = tmp_path_factory.mktemp("wheelhouse")
    build_wheelhouse("lineup-hub", set(EXTRAS.split(",")), house)
    return house


def _install(bin_dir: Path, requirement: str, wheelhouse: Path) -> Installed:
    """The Dockerfile's ``pip install --constraint``, its packages from ``wheelhouse``."""
    offline = ["--no-index", "--find-links", wheelhouse]
    pip = [bin_dir / "python", "-m", "pip", "install", "--quiet"]
    _run(
        [*pip, *offline, "--constraint", CONSTRAINTS, requirement],
        env=_without_the_test_venv(),
    )
    return Installed(bin_dir)


@pytest.fixture(scope="module")
def image(wheel: Path, wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The image's second stage: the wheel with the Dockerfile's extras, under the pins."""
    venv = _fresh_venv(tmp_path_factory.mktemp("image") / "venv")
    return _install(venv, f"{wheel}[{EXTRAS}]", wheelhouse)


@pytest.fixture(scope="module")
def agent_machine(
    wheel: Path, wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> Installed:
    """An agent's machine: the package alone, none of the server's dependencies."""
    venv = _fresh_venv(tmp_path_factory.mktemp("agent") / "venv")
    return _install(venv, str(wheel), wheelhouse)


def _get(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.same_on_every_database
def test_the_installed_wheel_knows_its_version(image: Installed) -> None:
    from importlib.metadata import version

    done = image.lineup("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"lineup {version('lineup-hub')}"


@pytest.mark.same_on_every_database
def test_an_agents_machine_runs_lineup_agent_without_the_server(
    agent_machine: Installed, tmp_path: Path
) -> None:
    python = str(agent_machine.bin / "python")
    for server_part in ("quart", "tortoise", "hypercorn", "asyncpg"):
        probe = subprocess.run(
            [python, "-c", f"import {server_part}"], capture_output=True, timeout=30, check=False
        )
        assert probe.returncode != 0, f"{server_part} is installed on the agent's machine"

    for command in (["agent", "--help"], ["agent", "demo", "--help"], ["connect", "--help"]):
        done = agent_machine.lineup(*command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("usage: lineup"), done.stdout
    # The SDK and the coding agents' hook import with what is there.
    probe = subprocess.run(
        [python, "-c", "import hub.sdk, hub.coding_agents.hook_client"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr

    # A server command says what to install, in one line, instead of a traceback.
    serve = agent_machine.lineup("serve", cwd=tmp_path)
    assert serve.returncode == 2
    assert "[server_not_installed]" in serve.stderr and "lineup-hub[server]" in serve.stderr
    assert "Traceback" not in serve.stderr


def test_the_image_entrypoint_serves_ready_on_postgresql(
    is_postgres: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if not is_postgres:
        pytest.skip("the image is run against PostgreSQL, as compose.yaml runs it")
    # Asked for only now: the SQLite run builds nothing for a test it skips.
    image: Installed = request.getfixturevalue("image")
    database_url: str = request.getfixturevalue("database_url")
    data = tmp_path / "data"  # the image's /data volume, its working directory
    data.mkdir()
    port = free_port()
    env = {
        **_without_the_test_venv(),
        **_dockerfile_env(),
        # As the image's environment, but on loopback and a free port, with this test's data.
        "LINEUP_HOST": "127.0.0.1",
        "LINEUP_PORT": str(port),
        "LINEUP_DATA_DIR": str(data),
        "LINEUP_DATABASE_URL": database_url,
    }
    entrypoint, *arguments = _dockerfile_json("ENTRYPOINT") + _dockerfile_json("CMD")
    log = tmp_path / "hub.log"
    with open(log, "wb") as output:
        hub = subprocess.Popen(
            [str(image.bin / entrypoint), *arguments],
            cwd=data,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        ready: tuple[int, dict[str, object]] = (0, {})
        while time.monotonic() < deadline and hub.poll() is None:
            try:
                ready = _get(url + "/readyz")
            except OSError:
                ready = (0, {})
            if ready[0] == 200:
                break
            time.sleep(0.2)
        assert ready[0] == 200, f"{ready}\n{log.read_text(errors='replace')}"
        assert ready[1]["checks"]["workers"]["postgres relay"] == "ok"  # type: ignore[index]
        assert _get(url + "/livez") == (200, {"status": "ok"})

        # The image's own HEALTHCHECK command, run with the image's Python.
        check = re.search(r"HEALTHCHECK[^\n]*\\\n\s*CMD\s+(\[.*\])", DOCKERFILE)
        assert check, "no exec-form HEALTHCHECK in the Dockerfile"
        program, *rest = json.loads(check.group(1))
        health = subprocess.run([str(image.bin / program), *rest], env=env, timeout=30, check=False)
        assert health.returncode == 0
    finally:
        if hub.poll() is None:
            os.killpg(hub.pid, signal.SIGTERM)
        try:
            hub.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)
            hub.wait(10)
    assert hub.returncode == 0, log.read_text(errors="replace")
    assert (data / "secret_key").exists()  # the generated key lives in the volume
