"""A fake Anthropic Messages API on loopback, scripted turn by turn, for driving the real
Claude Code CLI in tests.

Claude Code speaks to one endpoint, ``POST /v1/messages?beta=true``, always streaming
server-sent events. A test gives the model's turns in order (``ToolUse`` or ``Text``, or a
tuple of them for one message with several blocks); each call that offers tools takes the
next turn, and once the script is used up the model says ``Text("Done.")``. The side
request Claude Code makes for a session title (no tools, an ``output_config.format`` JSON
schema) gets a JSON title and does not take a turn, so a script does not depend on whether
a title is asked for.

The server runs in a thread with its own event loop
(``tests.coding_agents.loopback_server``), so sync tests, async tests and the CLI's
subprocess all reach it the same way. Every request body is kept in ``requests``;
``tool_results()`` reads back what the CLI sent as the outcome of each tool call.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.coding_agents.loopback_server import LoopbackServer

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Text:
    """A turn in which the model answers with text and ends its turn."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A turn in which the model calls one tool, e.g. ``ToolUse("Bash", {"command": ...})``."""

    name: str
    input: dict[str, Any]


# A turn is one block, or several in one message (e.g. two tool calls the CLI may run at once).
Turn = Text | ToolUse | tuple[Text | ToolUse, ...]


@dataclass(frozen=True)
class ToolResult:
    """What the CLI sent back to the model for one tool call."""

    tool_use_id: str
    content: str
    is_error: bool


@dataclass
class FakeAnthropic:
    """The scripted model API; use as a context manager, then point ``ANTHROPIC_BASE_URL``
    at ``url``."""

    script: list[Turn] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list, init=False)
    url: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self._turns = iter(list(self.script))
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._serve)

    def __enter__(self) -> FakeAnthropic:
        self.url = f"http://127.0.0.1:{self._server.start()}"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    # What a test reads back.

    def model_calls(self) -> list[dict[str, Any]]:
        """The request bodies that took (or would have taken) a scripted turn."""
        with self._lock:
            return [body for body in self.requests if _takes_a_turn(body)]

    def tool_results(self) -> list[ToolResult]:
        """Every tool result the CLI sent back, in order, each once (later requests repeat
        the whole conversation)."""
        calls = self.model_calls()
        if not calls:
            return []
        results = []
        for message in calls[-1].get("messages", []):
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_result":
                    results.append(
                        ToolResult(
                            tool_use_id=block["tool_use_id"],
                            content=_text_of(block.get("content")),
                            is_error=bool(block.get("is_error", False)),
                        )
                    )
        return results

    # The HTTP side: just enough HTTP/1.1 for one JSON request and one streamed answer.

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await self._answer_one(reader, writer):
            pass

    async def _answer_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in header_lines if line)
        }
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        path = target.partition("?")[0]
        if method != "POST" or path != "/v1/messages":
            await _send(
                writer,
                404,
                "application/json",
                b'{"type":"error","error":{"type":"not_found_error","message":"not here"}}',
            )
            return True
        request = json.loads(body)
        with self._lock:
            self.requests.append(request)
            turn = self._next_turn() if _takes_a_turn(request) else Text(_TITLE)
        if request.get("stream"):
            await _send(writer, 200, "text/event-stream", self._events(turn), close=True)
            return False
        await _send(writer, 200, "application/json", json.dumps(self._message(turn)).encode())
        return True

    def _next_turn(self) -> Turn:
        return next(self._turns, Text("Done."))

    def _message(self, turn: Turn) -> dict[str, Any]:
        """The whole answer as one message: its content blocks with their full inputs."""
        calls = turn if isinstance(turn, tuple) else (turn,)
        blocks: list[dict[str, Any]] = []
        for call in calls:
            if isinstance(call, ToolUse):
                tool_use_id = f"toolu_fake{next(self._ids):04d}"
                blocks.append(
                    {"type": "tool_use", "id": tool_use_id, "name": call.name, "input": call.input}
                )
            else:
                blocks.append({"type": "text", "text": call.text})
        uses_tools = any(block["type"] == "tool_use" for block in blocks)
        return {
            "id": f"msg_fake{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": blocks,
            "stop_reason": "tool_use" if uses_tools else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def _events(self, turn: Turn) -> bytes:
        """The answer as the SSE events of a streamed message: each block starts empty and
        gets its whole text, or its whole input as JSON, in one delta."""
        message = self._message(turn)
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"message": {**message, "content": [], "stop_reason": None}}),
            ("ping", {}),
        ]
        for index, block in enumerate(message["content"]):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                ("content_block_start", {"index": index, "content_block": start}),
                ("content_block_delta", {"index": index, "delta": delta}),
                ("content_block_stop", {"index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {}),
        ]
        return b"".join(
            f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
            for name, data in events
        )


# The session title Claude Code asks for on the side, as the JSON its schema wants.
_TITLE = json.dumps({"title": "Test session"})


def _takes_a_turn(request: dict[str, Any]) -> bool:
    """Whether a request is the agent's own model call rather than a side request (the
    session title), which offers no tools and asks for a structured output. (The agent's
    own calls have an ``output_config`` too, holding only the effort.)"""
    return bool(request.get("tools")) and "format" not in request.get("output_config", {})


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


async def _send(
    writer: asyncio.StreamWriter, status: int, content_type: str, body: bytes, close: bool = False
) -> None:
    reason = {200: "OK", 404: "Not Found"}[status]
    head = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        "Connection: close" if close else "Connection: keep-alive",
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
