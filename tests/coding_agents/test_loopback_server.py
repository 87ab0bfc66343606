"""The fake model APIs' server closes every connection's socket when it stops: a client
kept alive, and one accepted just as it stops (tests.coding_agents.loopback_server)."""

from __future__ import annotations

import asyncio
import gc
import socket
from asyncio import selector_events

from tests.coding_agents.loopback_server import LoopbackServer


async def echo_lines(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()


def open_transports() -> list[object]:
    gc.collect()
    return [
        o
        for o in gc.get_objects()
        if isinstance(o, selector_events._SelectorSocketTransport) and o._sock is not None
    ]


def closed_by_the_server(client: socket.socket) -> bool:
    """Its end of the connection closed (accepted, then dropped), or the connection refused
    (never accepted, when the listening socket closed)."""
    try:
        return client.recv(100) == b""
    except ConnectionResetError:
        return True


def test_stopping_closes_kept_alive_and_just_accepted_connections() -> None:
    before = len(open_transports())
    server = LoopbackServer(echo_lines)
    port = server.start()
    kept = socket.create_connection(("127.0.0.1", port), timeout=5)
    kept.sendall(b"hello\n")
    assert kept.recv(100) == b"hello\n"  # served, and kept open by the client
    late = socket.create_connection(("127.0.0.1", port), timeout=5)  # no turn of its handler yet
    server.stop()
    try:
        assert kept.recv(100) == b""  # the server's end is closed
        assert closed_by_the_server(late)
        assert len(open_transports()) == before
    finally:
        kept.close()
        late.close()
