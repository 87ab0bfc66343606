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

import asyncio
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
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from hub.protocol.actions import action_hash
from hub.sdk import Agent
from hub.sdk.adapters import demo
from hub.sdk.backoff import Backoff
from hub.testing import eventually, free_port
from tests.channels.peers import SmtpPeer
from tests.e2e.wheelhouse import build_wheelhouse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
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
        kwargs.setdefault("env", _without_the_test_venv())
        return subprocess.run(
            [str(self.bin / "lineup"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
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


@pytest.mark.same_on_every_database
def test_compose_runs_the_image_beside_postgresql_with_its_volume() -> None:
    """What the image test below cannot start: compose's wiring, checked against the
    Dockerfile it builds (no engine runs here to bring it up)."""
    hub, postgres = COMPOSE["services"]["hub"], COMPOSE["services"]["postgres"]
    assert hub["build"] == "."
    assert hub["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    image_env = _dockerfile_env()
    # The hub's data volume is the image's, and the published port is the one it serves.
    assert [v.split(":", 1)[1] for v in hub["volumes"]] == [image_env["LINEUP_DATA_DIR"]]
    assert re.search(r"^VOLUME " + re.escape(image_env["LINEUP_DATA_DIR"]) + "$", DOCKERFILE, re.M)
    assert [p.rsplit(":", 1)[1] for p in hub["ports"]] == [image_env["LINEUP_PORT"]]
    # The database URL names compose's own server, user and database.
    url = hub["environment"]["LINEUP_DATABASE_URL"]
    db_env = postgres["environment"]
    assert url == (
        f"postgres://{db_env['POSTGRES_USER']}:${{POSTGRES_PASSWORD}}@postgres:5432/"
        f"{db_env['POSTGRES_DB']}"
    )
    # `lineup backup` runs pg_dump inside the hub's container, which refuses a server of a
    # newer major: the image's Debian release must ship the client of compose's server.
    client_major = {"bookworm": 15, "trixie": 17}
    release = re.search(r"^ARG DEBIAN_RELEASE=(\w+)$", DOCKERFILE, re.M)
    assert release and "postgresql-client" in DOCKERFILE
    assert postgres["image"] == f"postgres:{client_major[release.group(1)]}"


@dataclass
class ImageHub:
    """The image as ``docker run`` starts it: its entrypoint and command, its environment,
    the ``/data`` volume (here a folder) as its working directory."""

    image: Installed
    env: dict[str, str]
    data: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.env['LINEUP_PORT']}"

    def start(self) -> None:
        entrypoint, *arguments = _dockerfile_json("ENTRYPOINT") + _dockerfile_json("CMD")
        with open(self.log, "ab") as output:
            self.process = subprocess.Popen(
                [str(self.image.bin / entrypoint), *arguments],
                cwd=self.data,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if _get(self.url + "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the image did not get ready:\n{self.output()}")

    def stop(self) -> int:
        """SIGTERM, as ``docker stop`` sends it; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            raise AssertionError(f"the image did not stop on SIGTERM:\n{self.output()}") from None

    def lineup(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``docker compose exec hub lineup …``."""
        return self.image.lineup(*args, cwd=self.data, env=self.env)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
# Every series docs/deploy.md offers a dashboard (counters without their _total suffix).
DASHBOARD_SERIES = {
    "lineup_http_requests",
    "lineup_http_request_duration_seconds",
    "lineup_agents_connected",
    "lineup_clients_connected",
    "lineup_events_appended",
    "lineup_outbox_notifications",
    "lineup_outbox_retrying",
    "lineup_outbox_oldest_pending_age_seconds",
    "lineup_cards_pending",
    "lineup_card_decision_seconds",
    "lineup_database_pool_size",
    "lineup_database_pool_idle",
    "process_cpu_seconds",
    "process_resident_memory_bytes",
    "python_gc_collections",
}
METRICS_TOKEN = "scrape-" + "i" * 24
PASSWORD = "correct horse battery"


async def _scrape(url: str) -> tuple[set[str], Samples]:
    async with httpx.AsyncClient(timeout=10) as client:
        refused = await client.get(url + "/metrics")
        assert refused.status_code == 401
        response = await client.get(
            url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
    assert response.status_code == 200, response.text
    families = list(text_string_to_metric_families(response.text))
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families
        for sample in family.samples
    }
    return {family.name for family in families}, samples


def _sum(samples: Samples, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (n, lbl), v in samples.items() if n == name and wanted <= set(lbl))


async def test_the_image_as_compose_runs_it_on_postgresql(
    is_postgres: bool,
    database_url: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    smtp: SmtpPeer,
) -> None:
    """The whole operator's path on the installed image: ready, the first account its
    admin and sign-up closed to strangers, a password reset mailed over SMTP, every
    dashboard series present and moving, and a backup restored with the agent resyncing."""
    if not is_postgres:
        pytest.skip("the image is run against PostgreSQL, as compose.yaml runs it")
    # Asked for only now: the SQLite run builds nothing for a test it skips.
    image: Installed = request.getfixturevalue("image")
    data = tmp_path / "data"
    data.mkdir()
    port = str(free_port())
    hub = ImageHub(
        image,
        {
            # None of the tests' own settings (an open sign-up, a fixed key): the image's.
            **{k: v for k, v in _without_the_test_venv().items() if not k.startswith("LINEUP_")},
            **_dockerfile_env(),
            # What compose sets (its environment), on loopback and a free port, with this
            # run's PostgreSQL.
            "LINEUP_HOST": "127.0.0.1",
            "LINEUP_PORT": port,
            "LINEUP_DATA_DIR": str(data),
            "LINEUP_DATABASE_URL": database_url,
            "LINEUP_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "LINEUP_SMTP_URL": smtp.url,
            "LINEUP_METRICS_TOKEN": METRICS_TOKEN,
        },
        data,
        tmp_path / "hub.log",
    )
    assert set(COMPOSE["services"]["hub"]["environment"]) <= set(hub.env)
    await asyncio.to_thread(hub.start)
    try:
        await _operate(hub, smtp, tmp_path)
    finally:
        status = await asyncio.to_thread(hub.stop)
    assert status == 0, hub.output()
    assert (data / "secret_key").exists()  # the generated key lives in the volume


async def _operate(hub: ImageHub, smtp: SmtpPeer, tmp_path: Path) -> None:
    status, ready = await asyncio.to_thread(_get, hub.url + "/readyz")
    assert status == 200 and ready["checks"]["workers"]["postgres relay"] == "ok"  # type: ignore[index]
    assert await asyncio.to_thread(_get, hub.url + "/livez") == (200, {"status": "ok"})
    # The image's own HEALTHCHECK command, run with the image's Python.
    check = re.search(r"HEALTHCHECK[^\n]*\\\n\s*CMD\s+(\[.*\])", DOCKERFILE)
    assert check, "no exec-form HEALTHCHECK in the Dockerfile"
    program, *rest = json.loads(check.group(1))
    health = await asyncio.to_thread(
        subprocess.run, [str(hub.image.bin / program), *rest], env=hub.env, timeout=30
    )
    assert health.returncode == 0
    names, before = await _scrape(hub.url)
    assert names >= DASHBOARD_SERIES, DASHBOARD_SERIES - names

    async with (
        httpx.AsyncClient(base_url=hub.url, timeout=15) as ada,
        httpx.AsyncClient(base_url=hub.url, timeout=15) as stranger,
    ):
        # The first account is the admin; after it, only an invitation opens sign-up.
        first = await ada.post(
            "/api/v1/auth/register", json={"email": "ada@example.com", "password": PASSWORD}
        )
        assert first.status_code == 201, first.text
        ws = first.json()["workspaceId"]
        listed = await asyncio.to_thread(hub.lineup, "user", "list")
        assert listed.returncode == 0, listed.stderr
        assert [
            (u["email"], u["isAdmin"]) for u in map(json.loads, listed.stdout.splitlines())
        ] == [("ada@example.com", True)]
        refused = await stranger.post(
            "/api/v1/auth/register", json={"email": "eve@example.com", "password": PASSWORD}
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "invitation_required"

        async def api(method: str, path: str, body: object = None) -> dict[str, object]:
            response = await ada.request(method, f"/api/v1/workspaces/{ws}{path}", json=body)
            assert response.status_code < 400, response.text
            return response.json()  # type: ignore[no-any-return]

        code = (await api("POST", "/pairing-codes"))["code"]
        agent = Agent(
            hub.url,
            state_dir=tmp_path / "agent",
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
            pairing_code=str(code),
            name="Builder",
        )
        async with agent:
            demo.install(agent, pause_s=0, say=lambda line: None)
            await api("POST", f"/agents/{agent.agent_id}/confirm", {"name": "Builder"})
            body = {"title": "Tidy the dependencies", "targetAgentId": agent.agent_id}
            kept = (await api("POST", "/tasks", body))["id"]

            async def pending_card() -> Any:
                waiting = (await api("GET", "/inbox"))["waitingForMe"]
                return waiting[0]["interaction"] if waiting else None  # type: ignore[index]

            interaction = await eventually(pending_card, within=20)
            card = interaction["card"]
            _, asked = await _scrape(hub.url)
            assert _sum(asked, "lineup_cards_pending") == 1
            assert _sum(asked, "lineup_agents_connected") == 1
            answer = {"optionId": "approve"}
            if card.get("action"):  # read from the card, as a person's page shows it
                answer["actionHash"] = action_hash(card["action"]["kind"], card["action"]["fields"])
            await api("POST", f"/interactions/{interaction['id']}/respond", answer)

            # Forgot the password: one mail over SMTP, its link sets a new one once.
            asked_reset = await stranger.post(
                "/api/v1/auth/password-reset", json={"email": "ada@example.com"}
            )
            assert asked_reset.status_code == 202
            (mail,) = await eventually(lambda: smtp.to("ada@example.com"), within=20)
            plain = mail.get_body(preferencelist=("plain",))
            assert plain is not None
            link = re.search(r"/password/reset/([\w.\-]+)", plain.get_content())
            assert link, plain.get_content()
            done = await stranger.post(
                "/api/v1/auth/password-reset/complete",
                json={"token": link.group(1), "newPassword": "a brand new passphrase"},
            )
            assert done.status_code == 200, done.text
            signed_in = await ada.post(
                "/api/v1/auth/login",
                json={"email": "ada@example.com", "password": "a brand new passphrase"},
            )
            assert signed_in.status_code == 200

            # An invitation by email: a delivery through the notification outbox.
            await api("POST", "/invitations", {"role": "member", "email": "mia@example.com"})
            await eventually(lambda: smtp.to("mia@example.com"), within=20)

            async def moved() -> Samples | None:
                _, now = await _scrape(hub.url)
                sent = _sum(now, "lineup_outbox_notifications", channel="email", status="sent")
                decided = _sum(now, "lineup_card_decision_seconds_count")
                return now if sent >= 1 and decided == 1 else None

            after = await eventually(moved, within=20)
            for series in (
                "lineup_http_requests_total",
                "lineup_http_request_duration_seconds_count",
                "lineup_events_appended_total",
                "process_cpu_seconds_total",
            ):
                assert _sum(after, series) > _sum(before, series), series
            assert _sum(after, "lineup_cards_pending") == 0
            assert _sum(after, "lineup_database_pool_size") >= 1

            # `docker compose exec hub lineup backup`, then work the backup does not hold.
            archive = tmp_path / "backups" / "hub.tar.gz"
            made = await asyncio.to_thread(hub.lineup, "backup", str(archive))
            assert made.returncode == 0, made.stderr
            lost = (await api("POST", "/tasks", {**body, "title": "After the backup"}))["id"]
            epoch = agent.state.epoch

            assert await asyncio.to_thread(hub.stop) == 0, hub.output()
            restored = await asyncio.to_thread(hub.lineup, "restore", str(archive))
            assert restored.returncode == 0, restored.stderr
            await asyncio.to_thread(hub.start)
            await eventually(lambda: agent.state.epoch not in (None, epoch), within=20)

        # The restored hub holds Ada's account as the backup did, reset password and all.
        again = await ada.post(
            "/api/v1/auth/login",
            json={"email": "ada@example.com", "password": "a brand new passphrase"},
        )
        assert again.status_code == 200, again.text
        assert (await ada.get(f"/api/v1/workspaces/{ws}/tasks/{kept}")).status_code == 200
        assert (await ada.get(f"/api/v1/workspaces/{ws}/tasks/{lost}")).status_code == 404
