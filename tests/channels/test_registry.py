"""Channels are found through entry points: the built-ins, and a plugin installed with pip."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from quart import Quart, request

from hub.channels.registry import discover
from hub.core.store.models import Interaction, InteractionStatus
from hub.testing import free_port
from tests.channels.conftest import eventually
from tests.channels.peers import serve_on_loopback

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "webhook_channel"


def test_the_built_in_channels_are_entry_points_of_the_hub() -> None:
    found = discover()
    assert {"email", "telegram"} <= set(found)
    for name in ("email", "telegram"):
        assert found[name].error is None
        assert found[name].distribution == "lineup-hub"


def test_a_missing_optional_package_names_the_extra_to_install() -> None:
    probe = (
        "import sys; sys.modules['telegram'] = None\n"
        "try:\n"
        "    import hub.channels.telegram\n"
        "except Exception as error:\n"
        "    print(error.hint)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pip install 'lineup-hub[telegram]'" in shown.stdout


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example channel installed with pip into a directory of its own (offline: no
    build isolation, no dependencies fetched)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
            "--no-build-isolation", "--target", str(target), str(EXAMPLE),
        ],
        check=True,
        timeout=300,
    )  # fmt: skip
    yield target


def test_the_example_plugin_installed_with_pip_is_found(installed_example: Path) -> None:
    probe = (
        "import json; from hub.channels.registry import discover\n"
        "found = discover()\n"
        "print(json.dumps({n: [d.distribution, repr(d.error)] for n, d in found.items()}))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={"PYTHONPATH": str(installed_example), "PATH": "/usr/bin:/bin"},
    )
    found = json.loads(shown.stdout)
    assert found["webhook"] == ["lineup-webhook-channel", "None"]
    assert {"email", "telegram"} <= set(found)


class Receiver:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self.app = Quart("receiver")

        @self.app.post("/hook")
        async def hook() -> str:
            self.posts.append((dict(request.headers), await request.get_data()))
            return "ok"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    peer = Receiver()
    stop = asyncio.Event()
    server = await serve_on_loopback(peer.app, peer.port, stop)
    yield peer
    stop.set()
    await server


async def test_the_example_plugin_posts_signed_cards_that_decide_through_the_hub(
    installed_example: Path, receiver: Receiver, make_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(installed_example))
    monkeypatch.setenv("WEBHOOK_CHANNEL_URL", receiver.url)
    monkeypatch.setenv("WEBHOOK_CHANNEL_SECRET", "s3cret")
    from lineup_webhook_channel import sign  # type: ignore[import-not-found]

    async with make_hub(outbound_allow_private=True) as hub:
        assert "webhook" in hub.runtime.channels
        interaction_id = await hub.ask(title="Rotate the API keys?", risk="medium")
        headers, body = (await eventually(lambda: receiver.posts))[0]
        assert headers["X-Lineup-Signature"] == sign("s3cret", headers["X-Lineup-Timestamp"], body)
        message: dict[str, Any] = json.loads(body)
        assert message["text"] == "Rotate the API keys?"
        buttons = {b["text"]["text"]: b["url"] for b in message["blocks"][1]["elements"]}
        approve = buttons["Approve"].removeprefix("http://hub.test")
        assert (await hub.client.get(approve)).status_code == 200
        assert (await hub.client.post(approve, form={})).status_code == 200
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.responded_via == "webhook"
