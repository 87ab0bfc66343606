"""``POST /hooks/v1/{claude-code,codex}``: a coding agent's hook events, over plain HTTP.

The hook client on the agent's machine (``lineup-hook``, ``hub.coding_agents.hook``) posts
each event's JSON as the CLI gave it, with the agent's credential as a bearer token, the
call's id (``Lineup-Hook-Call``, a ULID; the same on a retry) and how long it may wait for
a person (``Lineup-Hook-Wait``, seconds: the card expires then, before the CLI's own
timeout). A ``PreToolUse`` the CLI will ask about itself if it must (``Lineup-Hook-Mode:
check``) is only checked against the workspace's deny rules: refused, or let go on at
once. The answer's body is the hook's output, JSON for the client to print as it is
(empty when the hook has nothing to say), so the client never parses it. A request for a
decision stays open until someone decides; if the client goes away meanwhile (its CLI
killed it at the hook's timeout, or quit), the card is withdrawn.

This is ASGI middleware in front of the Quart app, as ``/mcp/`` is, rather than a Quart
route: Quart ends any response after ``RESPONSE_TIMEOUT``, and a decision may take an
hour.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from hypercorn.typing import ASGIFramework, ASGIReceiveCallable, ASGISendCallable, Scope

from hub.coding_agents.events import HOOK_EVENTS
from hub.config import Settings
from hub.core.errors import Conflict, HubError, InvalidInput, NotFound, PayloadTooLarge
from hub.host.headers import hardened_send
from hub.host.loopback_agents import Loopback, LoopbackAgents, bearer, refuse
from hub.sdk import HubRefused
from plugins.coding_agents.sessions import GATES, HookSessions

MOUNT = "/hooks"
CLIS = ("claude-code", "codex")
MAX_BODY_BYTES = 4_000_000
MAX_WAIT_S = 24 * 3600
EVENTS = frozenset(HOOK_EVENTS)
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


class HookEndpoint:
    """ASGI middleware: ``/hooks`` and below take hook events; the rest goes on."""

    mount = MOUNT

    def __init__(self, inner: ASGIFramework, settings: Settings) -> None:
        self.inner = inner
        self.settings = settings
        self.agents: LoopbackAgents[HookSessions] = LoopbackAgents(
            settings, name="hooks", idle_s=settings.mcp_idle_s, attach=HookSessions
        )

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        path = str(scope.get("path") or "")
        if scope["type"] != "http" or not (path == MOUNT or path.startswith(MOUNT + "/")):
            await self.inner(scope, receive, send)
            return
        send = hardened_send(send)
        async with contextlib.AsyncExitStack() as stack:
            try:
                # Who is asking comes first: a stranger learns nothing of the paths here.
                credential = bearer(
                    scope,
                    what="A coding agent's hook",
                    hint="Run `lineup connect claude-code` (or codex) on the agent's machine.",
                )
                served = await stack.enter_async_context(self.agents.using(credential))
                cli = _cli_of(scope)
                call_id, wait_s = _call_of(scope)
                ask = _asks(scope)
                hook = await _hook_event(receive)
            except HubError as error:
                await refuse(send, error)
                return
            try:
                output = await self._answer(served, cli, hook, call_id, wait_s, ask, receive)
            except HubError as error:
                await refuse(send, error)
                return
            except HubRefused as refused:
                # The gateway refused what the event became (the session's task, say): the
                # client falls back at once, where a 500 would have it retry until its wait
                # ran out.
                await refuse(send, Conflict(refused.message, code=refused.code, hint=refused.hint))
                return
            await _reply(send, 200, output)

    async def _answer(
        self,
        served: Loopback[HookSessions],
        cli: str,
        hook: dict[str, Any],
        call_id: str,
        wait_s: float,
        ask: bool,
        receive: ASGIReceiveCallable,
    ) -> dict[str, Any] | None:
        handling = asyncio.ensure_future(
            served.attached.handle(cli, hook, call_id, wait_s, ask=ask)
        )
        if hook["hook_event_name"] not in GATES or not ask:
            return await handling
        # A decision may wait long: if the hook goes away first (killed by its CLI), the
        # card it asked must not stay open. (An answer at Claude Code's own prompt leaves
        # the hook running: the session's next events withdraw the card then.)
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({handling, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if handling.done():
            return handling.result()
        handling.cancel()
        with contextlib.suppress(asyncio.CancelledError, HubError):
            await handling
        withdraw = dict(hook, hook_event_name="Withdraw")
        await served.attached.handle(cli, withdraw, call_id, wait_s)
        return None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.agents.running():
            yield


def _cli_of(scope: Scope) -> str:
    path = str(scope.get("path") or "")
    cli = path.removeprefix(MOUNT + "/v1/").strip("/")
    if scope.get("method") != "POST" or cli not in CLIS:
        raise NotFound(
            f"No hook endpoint at {path}.",
            code="not_found",
            hint="POST to /hooks/v1/claude-code or /hooks/v1/codex.",
        )
    return cli


def _header(scope: Scope, name: bytes) -> str | None:
    headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])  # type: ignore[call-overload]
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return None


def _call_of(scope: Scope) -> tuple[str, float]:
    call_id = _header(scope, b"lineup-hook-call") or ""
    if not _ULID.match(call_id):
        raise InvalidInput(
            "Lineup-Hook-Call must be the call's ULID (26 characters).",
            code="invalid_hook_call",
            hint="Send a new ULID for each hook call, and the same one when trying it again.",
        )
    wait = _header(scope, b"lineup-hook-wait") or "900"
    try:
        wait_s = float(wait)
    except ValueError:
        wait_s = -1.0
    if not 1 <= wait_s <= MAX_WAIT_S:
        raise InvalidInput(
            f"Lineup-Hook-Wait must be a number of seconds from 1 to {MAX_WAIT_S}.",
            code="invalid_hook_call",
            hint="Run `lineup connect` again to write a valid hook command.",
        )
    return call_id, wait_s


def _asks(scope: Scope) -> bool:
    """Whether a call may become a card (``ask``, the default) or is only checked."""
    mode = _header(scope, b"lineup-hook-mode") or "ask"
    if mode not in ("ask", "check"):
        raise InvalidInput(
            f"Lineup-Hook-Mode must be ask or check, not {mode[:40]!r}.",
            code="invalid_hook_call",
            hint="Leave the header out to ask a person; send check to apply only the "
            "workspace's deny rules.",
        )
    return mode == "ask"


async def _hook_event(receive: ASGIReceiveCallable) -> dict[str, Any]:
    body = bytearray()
    while True:
        message: Any = await receive()
        if message["type"] == "http.disconnect":
            raise InvalidInput("The hook went away before sending its event.")
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            raise PayloadTooLarge(
                f"A hook event may be at most {MAX_BODY_BYTES} bytes.",
                code="hook_event_too_large",
                hint="The call is too large to show a person; answer it in the terminal.",
            )
        if not message.get("more_body"):
            break
    try:
        hook = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        hook = None
    if not isinstance(hook, dict):
        raise InvalidInput(
            "A hook event must be a JSON object.",
            code="invalid_hook_event",
            hint="Post the JSON the CLI gives the hook on stdin, unchanged.",
        )
    event = hook.get("hook_event_name")
    if event not in EVENTS:
        raise InvalidInput(
            f"{str(event)[:100]!r} is not a hook event the hub takes.",
            code="invalid_hook_event",
            hint="Send one of: " + ", ".join(sorted(EVENTS)) + ".",
        )
    session = hook.get("session_id")
    if not isinstance(session, str) or not 1 <= len(session) <= 200:
        raise InvalidInput(
            "A hook event needs its 'session_id' (text, at most 200 characters).",
            code="invalid_hook_event",
            hint="Post the JSON the CLI gives the hook on stdin, unchanged.",
        )
    return hook


async def _disconnected(receive: ASGIReceiveCallable) -> None:
    while True:
        message: Any = await receive()
        if message["type"] == "http.disconnect":
            return


async def _reply(send: ASGISendCallable, status: int, value: dict[str, Any] | None) -> None:
    body = json.dumps(value).encode() if value is not None else b""
    response: Any = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    await send(response)
    await send({"type": "http.response.body", "body": body, "more_body": False})
