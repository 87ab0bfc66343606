"""A scripted stand-in for the OpenAI Responses API, for running the real Codex CLI offline.

Codex streams each model call as ``POST /v1/responses`` and reads Server-Sent Events back.
The fake answers each call with the next turn of its script (a shell command for Codex to
run, or a final text), and after the script with ``Text("Done.")`` so a run always ends.
Codex's own reviewer (asked when no hook decides an approval) calls the same endpoint with a
JSON schema whose answer is ``{"outcome": "allow" | "deny"}``; the fake answers it from
``reviewer_outcome`` without using up a turn, so a script means the same with or without it.

The server is plain asyncio streams on 127.0.0.1 in a thread of its own
(``tests.coding_agents.loopback_server``), so a synchronous test can drive a CLI subprocess
while the fake answers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from dataclasses import dataclass
from typing import Any

from tests.coding_agents.loopback_server import LoopbackServer


@dataclass(frozen=True)
class ExecCommand:
    """A turn in which the model asks Codex to run ``cmd``, escalated out of the sandbox.

    Asking for escalation (``require_escalated``) is what makes Codex ask for approval
    even where the sandbox would have let the command run.
    """

    cmd: str
    justification: str = "The task needs it."
    escalate: bool = True


@dataclass(frozen=True)
class Text:
    """A turn in which the model answers with text, which ends Codex's turn."""

    text: str


Turn = ExecCommand | Text


class FakeResponses:
    """The fake API: a context manager that serves while open; ``url`` is its ``/v1`` base."""

    def __init__(self, script: list[Turn], *, reviewer_outcome: str = "deny") -> None:
        self._script = list(script)
        self.reviewer_outcome = reviewer_outcome
        self.requests: list[dict[str, Any]] = []
        self.reviewer_requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._serve)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}/v1"

    def __enter__(self) -> FakeResponses:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def function_outputs(self) -> list[tuple[str, str]]:
        """Every ``(call_id, output)`` Codex sent back for a command, in order, without repeats.

        Codex resends the whole conversation on each call, so an output appears in every
        later request; it is reported once.
        """
        seen: dict[str, str] = {}
        with self._lock:
            bodies = list(self.requests)
        for body in bodies:
            for item in body.get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    output = item.get("output")
                    if not isinstance(output, str):
                        output = json.dumps(output)
                    seen.setdefault(item["call_id"], output)
        return list(seen.items())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await _read_request(reader)
            if request is None:
                return
            method, path, body = request
            if method == "POST" and path.split("?")[0].endswith("/responses"):
                await self._answer_responses(writer, body)
            else:
                # Codex also asks for /models on start; an empty list lets it go on.
                payload = json.dumps({"object": "list", "data": [], "models": []}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()

    async def _answer_responses(self, writer: asyncio.StreamWriter, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        with self._lock:
            if _is_reviewer_call(body):
                self.reviewer_requests.append(body)
                turn: Turn = Text(json.dumps({"outcome": self.reviewer_outcome}))
            else:
                self.requests.append(body)
                turn = self._script.pop(0) if self._script else Text("Done.")
            number = next(self._ids)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        for event in _events(turn, number):
            writer.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        await writer.drain()
        # One response per connection: the stream ends where the socket closes.
        raise ConnectionResetError


def _is_reviewer_call(body: dict[str, Any]) -> bool:
    text_format = json.dumps(body.get("text") or {})
    return '"outcome"' in text_format


def _events(turn: Turn, number: int) -> list[dict[str, Any]]:
    response_id = f"resp_{number}"
    if isinstance(turn, ExecCommand):
        arguments: dict[str, Any] = {"cmd": turn.cmd}
        if turn.escalate:
            arguments["sandbox_permissions"] = "require_escalated"
            arguments["justification"] = turn.justification
        args = json.dumps(arguments)
        item = {
            "type": "function_call",
            "id": f"fc_{number}",
            "call_id": f"call_{number}",
            "name": "exec_command",
            "arguments": args,
            "status": "completed",
        }
        opened = dict(item, arguments="", status="in_progress")
        middle = [
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": 0,
                "delta": args,
            },
            {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": 0,
                "arguments": args,
            },
        ]
    else:
        item = {
            "type": "message",
            "id": f"msg_{number}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        }
        opened = dict(item, content=[], status="in_progress")
        middle = [
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": turn.text,
            },
        ]
    response = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
    usage = {
        "input_tokens": 10,
        "output_tokens": 10,
        "total_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": opened},
        *middle,
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": dict(response, status="completed", output=[item], usage=usage),
        },
    ]


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    if headers.get("content-encoding") == "zstd":
        raise ValueError("zstd request bodies are not supported by the fake")
    return method, path, body
