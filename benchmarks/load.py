"""Load generators, each run as its own process so that clients never share the hub's CPU
time slice in one interpreter: ``python -m benchmarks.load ROLE '<json arguments>'``.

Roles print one JSON line with their figures (and ``ready`` first when the orchestrator must
wait for them to connect):

* ``sender`` — agent sockets sending ``message.create`` frames stamped with
  ``time.monotonic_ns()`` (one clock for every process on this machine), either at a fixed
  total rate (open loop: send times do not wait for acks) or as fast as acks allow with a
  window of frames in flight per socket;
* ``reader`` — client sockets on ``/ws/client`` timing each stamped message's arrival;
* ``person`` — one person creating tasks and answering cards through the JSON API, one
  request after another, timing each ``POST /tasks`` and each answer (what a person waits
  for while agents stream);
* ``grower`` — agent sockets reporting whole tasks as fast as acks allow (created,
  running, a message, now and then an artifact, then done, failed, or waiting on a card),
  to grow a big workspace over LAP;
* ``storm`` — every agent of a list connecting at once, as after a hub restart or a
  network blip: the time until the last is welcomed, then all leave together;
* ``idle`` — agent sockets that only say hello and send heartbeats;
* ``fanout_floor`` / ``idle_floor`` — the same against the bare echo server.

Arguments come in a JSON file (thousands of credentials do not fit in one argv string).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import uuid
from typing import Any

import websockets

HELLO = {"runtime": "bench", "agentVersion": "1", "capabilities": []}
# Load sockets never ping: a hub slowed down by the load must show up as latency, not as
# a load process that gives up on a keepalive timeout and ends the run. Compression is
# left as offered by default, as browsers and most WebSocket libraries do.
OPTIONS: dict[str, Any] = {"ping_interval": None, "open_timeout": 120}


def _envelope(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"id": uuid.uuid4().hex, "type": kind, "version": "0.1", "payload": payload})


async def _agent_socket(url: str, credential: str) -> Any:
    socket = await websockets.connect(
        url.replace("http", "ws", 1) + "/lap/v0.1",
        additional_headers={"Authorization": f"Bearer {credential}"},
        max_size=None,
        **OPTIONS,
    )
    await socket.send(_envelope("agent.hello", HELLO))
    while True:
        frame = json.loads(await socket.recv())
        if frame["type"] == "agent.welcome":
            return socket, frame["payload"]
        if frame["type"] == "error":
            raise RuntimeError(frame["payload"])


async def sender(args: dict[str, Any]) -> dict[str, Any]:
    sockets = [(await _agent_socket(args["url"], c))[0] for c in args["credentials"]]
    conversation, tag = args["conversation_id"], args["tag"]
    seconds, rate, window = args["seconds"], args.get("rate", 0), args.get("window", 8)
    sent = acked = errors = 0
    first_error: dict[str, Any] | None = None
    in_flight = [asyncio.Semaphore(window) for _ in sockets]

    def frame() -> str:
        content = f"bench:{tag}:{time.monotonic_ns()}"
        return _envelope("message.create", {"content": content, "conversationId": conversation})

    async def read_acks(index: int) -> None:
        nonlocal acked, errors, first_error
        async for raw in sockets[index]:
            frame = json.loads(raw)
            kind = frame["type"]
            if kind == "ack":
                acked += 1
                in_flight[index].release()
            elif kind == "error":
                errors += 1
                first_error = first_error or frame["payload"]
                in_flight[index].release()

    readers = [asyncio.create_task(read_acks(i)) for i in range(len(sockets))]
    started = time.perf_counter()
    deadline = started + seconds
    if rate:
        interval, n = 1.0 / rate, 0
        while (now := time.perf_counter()) < deadline:
            due = started + n * interval
            if due > now:
                await asyncio.sleep(due - now)
            await sockets[n % len(sockets)].send(frame())
            sent, n = sent + 1, n + 1
    else:

        async def pump(index: int) -> None:
            nonlocal sent
            while time.perf_counter() < deadline:
                await in_flight[index].acquire()
                await sockets[index].send(frame())
                sent += 1

        await asyncio.gather(*(pump(i) for i in range(len(sockets))))
    elapsed = time.perf_counter() - started
    for _ in range(200):  # let the last acks arrive
        if acked + errors >= sent:
            break
        await asyncio.sleep(0.05)
    for task in readers:
        task.cancel()
    for socket in sockets:
        await socket.close()
    return {
        "sent": sent,
        "acked": acked,
        "errors": errors,
        "first_error": first_error,
        "seconds": elapsed,
    }


async def person(args: dict[str, Any]) -> dict[str, Any]:
    import httpx

    writes: list[float] = []
    answers: list[float] = []
    errors: list[str] = []
    headers = {"Authorization": f"Bearer {args['token']}"}
    base = f"{args['url']}/api/v1/workspaces/{args['workspace']}"
    cards = iter(args["cards"])
    async with httpx.AsyncClient(headers=headers, timeout=30) as client:

        async def timed(into: list[float], path: str, body: dict[str, Any], ok: int) -> None:
            started = time.perf_counter()
            response = await client.post(base + path, json=body)
            into.append((time.perf_counter() - started) * 1000)
            if response.status_code != ok:
                errors.append(f"{path.split('/')[1]} {response.status_code} {response.text[:200]}")

        deadline = time.perf_counter() + args["seconds"]
        n = 0
        while time.perf_counter() < deadline:
            body = {"title": f"bench {args['tag']} {n}", "targetAgentId": args["target"]}
            await timed(writes, "/tasks", body, 201)
            card = next(cards, None)
            if card is not None:
                answer = {"optionId": "approve"}
                await timed(answers, f"/interactions/{card}/respond", answer, 200)
            n += 1
            await asyncio.sleep(args.get("pause_s", 0.05))  # a person, not a script
    return {"writes": writes, "answers": answers, "errors": len(errors), "first": errors[:3]}


def _task_frames(agent: int, n: int, args: dict[str, Any]) -> list[str]:
    """One task's life as its agent reports it (ids chosen by the agent, as LAP allows)."""
    task_id = f"bt{args['tag']}-{agent}-{n}"
    words = ("deploy", "migrate", "index", "render", "backup", "rotate", "audit", "build")
    title = f"{words[n % len(words)]} {words[(n // 8) % len(words)]} batch {n} of agent {agent}"
    created: dict[str, Any] = {"title": title, "taskId": task_id}
    if agent == 0:  # the first agent's tasks share one conversation, which grows with them
        created["conversationId"] = args["big_conversation"]
    frames = [
        _envelope("task.created", created),
        _envelope(
            "task.status_changed",
            {"taskId": task_id, "status": "running", "progress": 40, "summary": "halfway"},
        ),
        _envelope(
            "message.create",
            {"taskId": task_id, "content": f"Working on {title}: {n * 7919 % 100003} rows"},
        ),
    ]
    if n % 10 == 0:
        frames.append(
            _envelope(
                "artifact.created",
                {"taskId": task_id, "name": f"report-{n}.txt", "url": f"https://example.com/{n}"},
            )
        )
    if n % 50 == 0:  # one in fifty waits for a person
        card = {"type": "approval", "title": f"Apply {title}?", "risk": "low"}
        frames.append(_envelope("interaction.requested", {"taskId": task_id, "interaction": card}))
    else:
        status = "failed" if n % 12 == 0 else "succeeded"
        frames.append(_envelope("task.status_changed", {"taskId": task_id, "status": status}))
    return frames


async def grower(args: dict[str, Any]) -> dict[str, Any]:
    sockets = [(await _agent_socket(args["url"], c))[0] for c in args["credentials"]]
    window, acked, errors = args.get("window", 32), 0, 0
    first_error: dict[str, Any] | None = None
    in_flight = [asyncio.Semaphore(window) for _ in sockets]
    sent: int | None = None  # known once every frame is out
    answered = asyncio.Event()

    async def read_acks(index: int) -> None:
        nonlocal acked, errors, first_error
        async for raw in sockets[index]:
            frame = json.loads(raw)
            if frame["type"] == "ack":
                acked += 1
            elif frame["type"] == "error":
                errors += 1
                first_error = first_error or frame["payload"]
            else:
                continue
            in_flight[index].release()
            if sent is not None and acked + errors >= sent:
                answered.set()

    async def pump(index: int) -> int:
        sent = 0
        for n in range(args["start"], args["start"] + args["per_agent"]):
            for frame in _task_frames(index, n, args):
                await in_flight[index].acquire()
                await sockets[index].send(frame)
                sent += 1
        return sent

    readers = [asyncio.create_task(read_acks(i)) for i in range(len(sockets))]
    started = time.perf_counter()
    sent = sum(await asyncio.gather(*(pump(i) for i in range(len(sockets)))))
    if acked + errors < sent:  # every frame answered before the phase ends
        await answered.wait()
    elapsed = time.perf_counter() - started
    for task in readers:
        task.cancel()
    for socket in sockets:
        await socket.close()
    return {"sent": sent, "errors": errors, "first_error": first_error, "seconds": elapsed}


async def reader(args: dict[str, Any]) -> dict[str, Any]:
    url = (
        args["url"].replace("http", "ws", 1)
        + f"/ws/client?workspace={args['workspace']}&after={args['after']}"
    )
    headers = {"Authorization": f"Bearer {args['token']}"}
    prefix, expect = f"bench:{args['tag']}:", args["expect"]
    sockets = await _connect_many(
        args.get("sockets", 1),
        lambda: websockets.connect(url, additional_headers=headers, max_size=None, **OPTIONS),
    )
    print("ready", flush=True)
    latest: dict[str, float] = {}  # sent stamp -> latency to the last socket here (ms)
    samples: list[float] = []
    settled = 0  # sockets that saw every expected event, or closed before
    all_settled = asyncio.Event()

    def settle() -> None:
        nonlocal settled
        settled += 1
        if settled == len(sockets):
            all_settled.set()

    async def listen(socket: Any) -> None:
        # Every socket is read until it closes, as a browser would, not only until its
        # samples are in: the workspace's other events keep coming (agents of an earlier
        # phase going offline, say), and once 16 frames lie unread websockets stops
        # reading the socket, the hub's closing frame included, so each close would
        # wait out its 10 s timeout — 250 sockets outlasted the orchestrator's 300 s.
        seen = 0
        try:
            async for raw in socket:
                received = time.monotonic_ns()
                if seen >= expect:
                    continue  # drained, not measured
                event = json.loads(raw)
                content = (event.get("payload") or {}).get("content")
                if event.get("type") != "message.created" or not str(content).startswith(prefix):
                    continue
                stamp = content[len(prefix) :]
                latency = (received - int(stamp)) / 1e6
                samples.append(latency)
                latest[stamp] = max(latest.get(stamp, 0.0), latency)
                seen += 1
                if seen == expect:
                    settle()
        finally:
            if seen < expect:
                settle()

    listeners = [asyncio.create_task(listen(s)) for s in sockets]
    # A reader that missed events reports fewer samples rather than hanging the run.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(all_settled.wait(), timeout=args.get("timeout", 120))
    await asyncio.gather(*(socket.close() for socket in sockets))
    await asyncio.gather(*listeners, return_exceptions=True)
    return {
        "received": len(samples),
        "latencies": samples if len(sockets) == 1 else [],
        "last": latest,
    }


async def _connect_many(count: int, connect: Any, at_once: int = 20) -> list[Any]:
    """Open ``count`` sockets, ``at_once`` handshakes in flight: like many real clients, but
    without a thundering herd that would only measure the listen backlog."""
    gate = asyncio.Semaphore(at_once)

    async def one() -> Any:
        async with gate:
            return await connect()

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def idle(args: dict[str, Any]) -> dict[str, Any]:
    gate = asyncio.Semaphore(20)

    async def one(credential: str) -> tuple[Any, dict[str, Any]]:
        async with gate:
            return await _agent_socket(args["url"], credential)

    opened = await asyncio.gather(*(one(c) for c in args["credentials"]))
    connected = [socket for socket, _ in opened]
    interval = opened[0][1]["heartbeatIntervalS"] if opened else 25.0
    print("ready", flush=True)

    async def beat(socket: Any) -> None:
        while True:
            await asyncio.sleep(interval)
            await socket.send(_envelope("agent.heartbeat", {}))
            # Drain acks so the hub never waits on a full socket buffer.
            while True:
                try:
                    await asyncio.wait_for(socket.recv(), timeout=0.001)
                except TimeoutError:
                    break

    beats = [asyncio.create_task(beat(s)) for s in connected]
    await asyncio.sleep(args["hold_seconds"])
    for task in beats:
        task.cancel()
    for socket in connected:
        await socket.close()
    return {"connections": len(connected)}


async def _echoed_socket(url: str) -> Any:
    """The floor's hello: the same handshake and frame, on the bare echo server
    (``benchmarks.floor``), answered by its echo."""
    socket = await websockets.connect(url, max_size=None, **OPTIONS)
    await socket.send(_envelope("agent.hello", HELLO))
    await socket.recv()
    return socket


async def storm(args: dict[str, Any]) -> dict[str, Any]:
    """Every credential's socket at once, until each is welcomed; with ``floor``, as many
    sockets on the bare echo server instead (the same client work, no hub)."""
    # As many handshakes in flight as the hub's listen backlog takes: more would measure
    # the kernel's SYN retries, not the hub.
    gate = asyncio.Semaphore(args.get("at_once", 100))
    refused = 0

    async def one(credential: str) -> Any:
        nonlocal refused
        async with gate:
            try:
                if args.get("floor"):
                    return await _echoed_socket(args["url"])
                return (await _agent_socket(args["url"], credential))[0]
            except (OSError, RuntimeError, websockets.WebSocketException):
                refused += 1
                return None

    started = time.perf_counter()
    opened = await asyncio.gather(*(one(c) for c in args["credentials"]))
    welcomed_s = time.perf_counter() - started
    print("ready", flush=True)
    await asyncio.sleep(args["hold_seconds"])
    await asyncio.gather(*(socket.close() for socket in opened if socket is not None))
    return {"welcomed_s": welcomed_s, "refused": refused}


async def fanout_floor(args: dict[str, Any]) -> dict[str, Any]:
    """Sockets on the bare echo server, timing each broadcast frame's arrival."""
    sockets = await _connect_many(
        args["sockets"], lambda: websockets.connect(args["url"], **OPTIONS)
    )
    print("ready", flush=True)
    latest: dict[str, float] = {}

    async def listen(socket: Any) -> None:
        for _ in range(args["expect"]):
            raw = await socket.recv()
            received = time.monotonic_ns()
            stamp = str(raw).split(":", 1)[1]
            latest[stamp] = max(latest.get(stamp, 0.0), (received - int(stamp)) / 1e6)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(listen(s) for s in sockets)), timeout=120)
    for socket in sockets:
        await socket.close()
    return {"last": latest}


async def idle_floor(args: dict[str, Any]) -> dict[str, Any]:
    sockets = await _connect_many(
        args["sockets"], lambda: websockets.connect(args["url"], **OPTIONS)
    )
    print("ready", flush=True)
    await asyncio.sleep(args["hold_seconds"])
    for socket in sockets:
        await socket.close()
    return {"connections": len(sockets)}


ROLES = {
    "sender": sender,
    "reader": reader,
    "person": person,
    "grower": grower,
    "storm": storm,
    "idle": idle,
    "fanout_floor": fanout_floor,
    "idle_floor": idle_floor,
}

if __name__ == "__main__":
    with open(sys.argv[2]) as arguments_file:
        role, arguments = sys.argv[1], json.load(arguments_file)
    print(json.dumps(asyncio.run(ROLES[role](arguments))), flush=True)
