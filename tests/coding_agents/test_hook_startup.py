"""The hook client's start-up, which every tool call of a coding agent pays.

What it imports is checked rather than how long it takes (tests never time): each module
kept out here was measured as a share of the hook's start-up (``make bench`` has the
figure). ``socket`` (with enum and selectors) was 8 of 20 ms, ``http.client`` 46 of 85,
``typing`` a tenth; ``json`` is imported only when an answer must be read.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.coding_agents import credentials, hook_command

KEPT_OUT = {"socket", "ssl", "typing", "json", "http", "email", "enum", "selectors", "site"}
OURS = {
    "hub",
    "hub.coding_agents",
    "hub.coding_agents.hook_client",
    "hub.coding_agents.credentials",
    "hub.coding_agents.plain_json",
}


@pytest.fixture
def hub_address() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback HTTP server that takes each request and answers 200 with no body, as the
    hub answers a report."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(30)
    requests: list[bytes] = []

    def serve() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(30)
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
            requests.append(received)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", requests
    finally:
        server.close()
        thread.join(timeout=30)


def test_a_report_is_posted_on_the_few_modules_the_hook_needs(
    hub_address: tuple[str, list[bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, requests = hub_address
    monkeypatch.setenv("LINEUP_AGENT_HOME", str(tmp_path))
    credentials.save("claude-code", credentials.Connection(url, "lc_secret"))
    command = hook_command.build("claude-code", 60).split()
    event = {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash"}
    done = subprocess.run(
        [*command[:3], "-X", "importtime", *command[3:]],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LINEUP_AGENT_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert requests and requests[0].startswith(b"POST /hooks/v1/claude-code HTTP/1.1")
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "hub.coding_agents.hook_client" in names
    assert not {name.split(".")[0] for name in names} & KEPT_OUT, " ".join(sorted(names))
    assert {name for name in names if name.split(".")[0] in {"hub", "plugins"}} <= OURS


def test_a_hub_that_never_answers_the_tls_handshake_holds_the_hook_only_until_its_deadline(
    tmp_path: Path,
) -> None:
    """The socket handed to ``ssl`` must keep the request's deadline: a hub that takes the
    connection and says nothing would otherwise hold the tool call until the CLI kills it."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        home = tmp_path / "agent"
        env = {**os.environ, "LINEUP_AGENT_HOME": str(home)}
        url = f"https://127.0.0.1:{server.getsockname()[1]}"
        script = (
            "import sys\n"
            "from hub.coding_agents import credentials, hook_client\n"
            f"credentials.save('claude-code', credentials.Connection({url!r}, 'lc_secret'))\n"
            "hook_client.REPORT_TIMEOUT_S = 1.0\n"
            'event = b\'{"hook_event_name": "PostToolUse", "session_id": "s"}\'\n'
            "out = hook_client.run('claude-code', event, wait_s=1, environ={})\n"
            "sys.stdout.write(repr(out))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=env
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "b''"  # the report is dropped, said on stderr
    assert "not reported to the LineUp hub" in done.stderr
