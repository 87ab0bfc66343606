"""What one WebSocket can make ``lineup serve`` hold, over real sockets: a client that sends
without reading is slowed to the hub's pace instead of filling its memory, and a frame past
the limit closes its socket with 1009."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hub.core.people.accounts import create_api_token
from hub.host.websocket_limits import FRAME_TOO_LARGE_REASON
from hub.protocol.lap import MAX_FRAME_BYTES
from hub.testing import HubProcess
from tests.plugins.lap_client import lap_url, raw_agent

MIB = 1024 * 1024
# Frames whose answers (an error of a few hundred bytes each) fill the socket's buffers, so
# that the hub's handler waits on its sends; then big frames, which the hub may only read
# as fast as it answers.
ANSWER_FILLERS = 20_000
BIG_FRAME = "x" * (MIB // 2)
FLOOD_BYTES = 256 * MIB
# A flooding socket may hold a few frames in each of the queues between TCP and its handler
# (about 7 MiB of these); anything near the flood's size means it is being taken in whole.
ALLOWED_GROWTH = 64 * MIB


def resident_bytes(hub: HubProcess) -> int:
    assert hub.process is not None
    status = Path(f"/proc/{hub.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def healthz(hub: HubProcess) -> int:
    with urllib.request.urlopen(hub.url + "/healthz", timeout=10) as response:
        return int(response.status)


async def flood(socket: ClientConnection, sent: list[int]) -> None:
    """Send frames and never read; ``sent`` counts the bytes of big frames handed over."""
    for n in range(ANSWER_FILLERS):
        await socket.send(f'{{"id":"f{n}","type":"task.accepted","payload":{{}}}}')
    while sent[0] < FLOOD_BYTES:
        await socket.send(BIG_FRAME)
        sent[0] += len(BIG_FRAME)


async def until_stalled(task: asyncio.Task[None], sent: list[int]) -> None:
    """Wait until ``task`` is done, or has handed over nothing new for several checks."""
    unchanged, last = 0, -1
    while not task.done() and unchanged < 6:
        await asyncio.sleep(0.5)
        unchanged, last = (unchanged + 1, last) if sent[0] == last else (0, sent[0])


async def test_a_client_that_floods_without_reading_leaves_the_hub_bounded_and_answering(
    hub: HubProcess,
) -> None:
    async with raw_agent(hub.url) as (warm_up, _):  # one socket's worth of imports and caches
        await warm_up.call("task.accepted")
    baseline = resident_bytes(hub)
    # A small receive buffer, so that the hub's answers back up soon.
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    tcp.connect(("127.0.0.1", hub.port))
    flooder = await connect(lap_url(hub.url), sock=tcp, proxy=None, compression=None)
    try:
        sent = [0]
        flooding = asyncio.create_task(flood(flooder, sent))
        await until_stalled(flooding, sent)
        growth = resident_bytes(hub) - baseline
        assert growth < ALLOWED_GROWTH, (
            f"the hub grew by {growth / MIB:.0f} MiB while a client sent "
            f"{sent[0] / MIB:.0f} MiB without reading"
        )
        assert not flooding.done(), "the flood should be held back, not taken in whole"
        # Everyone else is still served meanwhile.
        assert await asyncio.to_thread(healthz, hub) == 200
        async with raw_agent(hub.url) as (other, _):
            answer = await other.answer(await other.send("task.accepted"), within=10)
            assert answer["payload"]["code"] == "hello_required"
        flooding.cancel()
        await asyncio.gather(flooding, return_exceptions=True)
    finally:
        flooder.transport.abort()
    # The flooder's connection, gone with its frames still queued, holds nothing: the hub
    # stops without being killed.
    await asyncio.to_thread(hub.stop)
    assert hub.process is not None and hub.process.returncode == 0, hub.log()


async def test_a_frame_past_the_limit_closes_lap_and_browser_sockets_with_1009(
    hub: HubProcess, make_user
) -> None:  # type: ignore[no-untyped-def]
    user, workspace = await make_user()
    _, token = await create_api_token(user, "browser")
    browser_url = hub.url.replace("http://", "ws://") + f"/ws/client?workspace={workspace.id}"
    too_long = "x" * (MAX_FRAME_BYTES + 1)
    async with (
        raw_agent(hub.url) as (_, lap),
        connect(browser_url, additional_headers={"Authorization": f"Bearer {token}"}) as browser,
    ):
        await browser.recv()  # client.welcome
        for opened in (lap, browser):
            with pytest.raises(ConnectionClosed):
                await opened.send(too_long)
                async with asyncio.timeout(30):
                    while True:
                        await opened.recv()
            assert opened.close_code == 1009
            assert opened.close_reason == FRAME_TOO_LARGE_REASON
    # A frame of the limit exactly is read, and answered.
    async with raw_agent(hub.url) as (agent, _):
        padding = MAX_FRAME_BYTES - len('{"id":"big","type":"task.accepted","payload":{"p":""}}')
        await agent.send_text(
            '{"id":"big","type":"task.accepted","payload":{"p":"%s"}}' % ("x" * padding)
        )
        answer = await agent.answer("big", within=30)
        assert answer["payload"]["code"] == "hello_required"
