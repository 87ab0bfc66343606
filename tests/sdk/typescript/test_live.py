"""The TypeScript SDK against a real hub process, over real sockets: the node suites of
``sdk/typescript/test/live`` run on Node 22, each acting as agents (the SDK) and as a
person (the JSON API, and Telegram through ``PersonServer`` and the local Bot API server
the hub long-polls). A failure shows node's own report."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_api_token
from hub.core.store.models import User
from hub.testing import eventually
from tests.channels.peers import BotApiPeer
from tests.sdk.live import LiveHub, live_hub
from tests.sdk.typescript.node import passed, run_node
from tests.sdk.typescript.person_server import PersonServer

ADA = 4343
# One suite at a time while working on it: LINEUP_TS_SUITES=test/live/cards.test.ts
SUITES = os.environ.get("LINEUP_TS_SUITES", "test/live/*.test.ts")
SUITE_TIMEOUT_S = 240

pytestmark = pytest.mark.timeout(SUITE_TIMEOUT_S + 60)


@pytest.fixture
async def hub(db: str, tmp_path: Path, bot_api: BotApiPeer) -> AsyncIterator[LiveHub]:
    env = {"LINEUP_TELEGRAM_BOT_TOKEN": bot_api.token, "LINEUP_TELEGRAM_API_URL": bot_api.url}
    async with live_hub(db, tmp_path / "hub", **env) as running:
        yield running


async def test_the_typescript_sdk_against_a_live_hub(
    hub: LiveHub, bot_api: BotApiPeer, tmp_path: Path
) -> None:
    token, _ = await create_link_token(hub.user_id, "telegram")
    bot_api.send_text(ADA, f"/start {token}")
    await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
    _, api_token = await create_api_token(await User.get(id=hub.user_id), "node suites")
    async with PersonServer(hub, bot_api, ADA) as person:
        status, output = await run_node(
            [
                "--test",
                "--test-reporter=spec",
                "--test-concurrency=1",
                "--test-timeout=120000",
                SUITES,
            ],
            timeout_s=SUITE_TIMEOUT_S,
            LINEUP_TEST_HUB=hub.url,
            LINEUP_TEST_TOKEN=api_token,
            LINEUP_TEST_WORKSPACE=hub.workspace_id,
            LINEUP_TEST_PERSON=person.url,
            LINEUP_AGENT_HOME=str(tmp_path / "agents"),
        )
    counts = passed(output)
    assert status == 0 and counts.get("fail") == 0, output
    assert SUITES != "test/live/*.test.ts" or counts.get("pass", 0) >= 20, output
    assert counts.get("skipped") == 0, output
    assert SUITES != "test/live/*.test.ts" or person.restarts == 1, output
    print(f"\nnode suites: {counts}\n{output}")
