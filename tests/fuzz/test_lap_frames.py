"""Hostile LAP frames against a live hub: never a crash, a hang or a closed socket — always
a protocol answer (``ack``, ``error`` or ``warning``) naming what was wrong.

The budget is small in ``make test``; ``make fuzz`` runs the larger profile
(``LINEUP_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from hub.core.people.accounts import create_user
from hub.protocol.lap import UPLINK_PAYLOADS
from hub.testing import HubProcess, TestDatabases, opened
from tests.core.agent_setup import SECRET_KEY, paired_agent
from tests.figures import FRAMES_FUZZED, record

EXAMPLES = int(os.environ.get("LINEUP_FUZZ_EXAMPLES", "150"))
ANSWERS = {"ack", "error", "warning"}

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
known_fields = sorted(
    {
        field.alias or name
        for model in UPLINK_PAYLOADS.values()
        for name, field in model.model_fields.items()
    }
)
payloads = st.dictionaries(
    st.sampled_from(known_fields) | st.text(max_size=12), json_values, max_size=6
)
envelopes = st.fixed_dictionaries(
    {
        "id": st.text(max_size=120) | json_values,
        "type": st.sampled_from(sorted(UPLINK_PAYLOADS)) | st.text(max_size=40) | json_values,
        "payload": payloads | json_values,
    },
    optional={
        "version": st.sampled_from(["0.1", "0.2", 1, None]),
        "workspaceId": st.text(max_size=40) | json_values,
        "taskId": st.text(max_size=60) | json_values,
        "conversationId": st.text(max_size=60) | json_values,
        "sequence": json_values,
        "occurredAt": st.text(max_size=40) | json_values,
        "extra": json_values,
    },
)
frames = (
    envelopes.map(json.dumps)
    | json_values.map(json.dumps)
    | st.text(max_size=200)
    | st.binary(max_size=200)
)


@pytest.fixture(scope="module")
def live_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientConnection]:
    root = tmp_path_factory.mktemp("fuzz")
    databases = TestDatabases(root, os.environ.get("LINEUP_TEST_DATABASE_URL") or None)

    async def prepare() -> tuple[str, str]:
        url = await databases.create()
        async with opened(url):
            _, workspace = await create_user("fuzz@example.com", "correct horse")
            _, credential = await paired_agent(workspace)
        return url, credential

    url, credential = asyncio.run(prepare())
    hub = HubProcess(url, root / "hub", LINEUP_SECRET_KEY=SECRET_KEY).start()
    try:
        with connect(
            hub.url.replace("http://", "ws://") + "/lap/v0.1",
            additional_headers={"Authorization": f"Bearer {credential}"},
            open_timeout=10,
        ) as socket:
            socket.send(json.dumps({"id": "hello", "type": "agent.hello", "payload": {}}))
            while json.loads(socket.recv(timeout=10))["type"] != "agent.welcome":
                pass
            yield socket
        assert "Traceback" not in hub.log(), hub.log()[-3000:]
    finally:
        hub.stop()
        asyncio.run(databases.drop(url))
        asyncio.run(databases.close())


def answer_to(socket: ClientConnection) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(socket.recv(timeout=10))
        if frame["type"] in ANSWERS:
            return frame


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=frames)
def test_every_frame_gets_a_protocol_answer(
    live_agent: ClientConnection, frame: str | bytes
) -> None:
    live_agent.send(frame)
    record(FRAMES_FUZZED)
    answer = answer_to(live_agent)
    if answer["type"] == "error":
        assert answer["payload"]["code"] != "internal_error", answer
        assert answer["payload"]["message"] and answer["payload"]["hint"]
    # The socket is still up: a heartbeat is answered.
    live_agent.send(json.dumps({"id": "beat", "type": "agent.heartbeat", "payload": {}}))
    assert answer_to(live_agent)["type"] == "ack"


def test_the_fuzzed_hub_is_still_healthy(live_agent: ClientConnection, tmp_path: Path) -> None:
    live_agent.send(json.dumps({"id": "last", "type": "agent.heartbeat", "payload": {}}))
    assert answer_to(live_agent)["type"] == "ack"
