"""The hook client: what ``lineup-hook claude-code|codex [--wait S]`` does for each event.

The CLI starts it for each hook event with the event's JSON on stdin and reads its
decision, if any, from stdout. It posts the event to the hub (``/hooks/v1/<cli>``, the
credential ``lineup connect`` stored), and prints what the hub answers. It runs on every
tool call, so it imports only the standard library and asks the hub only when there is
something to report or to decide:

- Claude Code in its terminal UI asks about a call through ``PermissionRequest``, while its
  own dialog shows: the hook asks the hub, and the first answer wins.
- Claude Code headless (``claude -p``, its SDKs) shows no dialog and never sends
  ``PermissionRequest``: ``PreToolUse`` asks the hub about the calls Claude Code would
  refuse or ask about (``hub.coding_agents.claude_rules``).
- Codex asks through ``PermissionRequest``; its ``PreToolUse`` can only deny.
- Every other ``PreToolUse`` is only checked against the workspace's deny rules
  (``Lineup-Hook-Mode: check``): the hub refuses the call, or says nothing at once.

The hub unreachable never allows anything. A call Claude Code's dialog is asking about is
left to the dialog; a headless call, or any Codex call (whose fallback is a model's own
review), is denied. Either way the reason goes to stderr. Reports and checks that cannot be
delivered are dropped with a line on stderr: the CLI is never held up for them, and a call
it would ask about is asked about again at ``PermissionRequest``.

A request cut off after the hub took it (the hub restarting, say) is sent again with the
same call id until the wait is over, and finds the same card: an answer given meanwhile
is not lost.
"""

from __future__ import annotations

import _socket  # the C module: ``socket``'s own import (enum, selectors) was 8 of 20 ms here
import os
import sys
import time

from hub.coding_agents import credentials, plain_json

# typing's import is a tenth of the hook's start-up; the annotations need it only when
# checked (mypy takes any TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLIS = ("claude-code", "codex")
DEFAULT_WAIT_S = 900
REPORT_TIMEOUT_S = 20.0
RETRY_EVERY_S = 1.0
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class Unreachable(Exception):
    """The hub could not be reached, or did not take the event; the message says why."""


USAGE = "usage: lineup-hook {claude-code,codex} [--wait SECONDS]"


def main(argv: list[str] | None = None) -> int:
    # Read by hand: argparse costs the hook a few milliseconds on every tool call.
    args = list(sys.argv[1:] if argv is None else argv)
    wait_s = DEFAULT_WAIT_S
    if "--wait" in args:
        at = args.index("--wait")
        try:
            wait_s = int(args[at + 1])
        except (IndexError, ValueError):
            print(USAGE, file=sys.stderr)
            return 2
        del args[at : at + 2]
    if len(args) != 1 or args[0] not in CLIS:
        print(USAGE, file=sys.stderr)
        return 2
    output = run(args[0], sys.stdin.buffer.read(), wait_s=wait_s, environ=os.environ)
    if output:
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
    return 0


def run(cli: str, event: bytes, *, wait_s: int, environ: Any) -> bytes:
    """The hook's output (JSON) for the ``event`` the CLI sent; empty: say nothing.

    The event goes to the hub as the CLI wrote it, and the hub's answer comes back as the
    hook's output, so on the common path nothing here parses JSON."""
    name = plain_json.text_field(event, "hook_event_name")
    if name is None:
        name = str(_parsed(event).get("hook_event_name") or "")
    gate = is_gate(cli, name, event, environ)
    connection = credentials.load(cli)
    try:
        if connection is None:
            raise Unreachable(f"this machine is not connected; run `lineup connect {cli}`")
        check = name == "PreToolUse" and not gate
        return post(connection, cli, event, wait_s=wait_s, gate=gate, check=check)
    except Unreachable as problem:
        return fallback(cli, name, gate, str(problem))


def _parsed(event: bytes) -> dict[str, Any]:
    import json

    try:
        value = json.loads(event or b"{}")
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {}


def is_gate(cli: str, name: str, event: bytes, environ: Any) -> bool:
    """Whether this event asks the hub for a decision."""
    if name == "PermissionRequest":
        return True
    if name != "PreToolUse" or cli != "claude-code" or not headless(environ):
        return False
    from pathlib import Path

    from hub.coding_agents.claude_rules import headless_verdict

    return bool(headless_verdict(_parsed(event), environ, Path.home()) == "asks")


def headless(environ: Any) -> bool:
    """Claude Code without its terminal UI: ``claude -p`` (``sdk-cli``) and its SDKs."""
    return str(environ.get("CLAUDE_CODE_ENTRYPOINT") or "cli").startswith("sdk")


def fallback(cli: str, name: str, gate: bool, problem: str) -> bytes:
    """What the hook says when the hub did not answer: never an allow."""
    if not gate:
        what = "checked against the workspace's rules in" if name == "PreToolUse" else "reported to"
        print(f"lineup-hook: not {what} the LineUp hub: {problem}", file=sys.stderr)
        return b""
    if cli == "claude-code" and name == "PermissionRequest":
        print(
            f"lineup-hook: the LineUp hub did not answer ({problem}); answer in the terminal.",
            file=sys.stderr,
        )
        return b""
    reason = f"Not allowed: the LineUp hub, which decides this call, did not answer ({problem})."
    print(f"lineup-hook: {reason}", file=sys.stderr)
    import json

    if name == "PreToolUse":
        decision: dict[str, Any] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    else:
        decision = {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": reason},
        }
    return json.dumps({"hookSpecificOutput": decision}).encode()


def post(
    connection: credentials.Connection,
    cli: str,
    body: bytes,
    *,
    wait_s: int,
    gate: bool,
    check: bool = False,
) -> bytes:
    """POST the event; a gate's request lost after the hub took it is sent again.

    ``check``: a call the hub only checks against the workspace's deny rules."""
    headers = {
        "Authorization": f"Bearer {connection.credential}",
        "Content-Type": "application/json",
        "Lineup-Hook-Call": new_ulid(),
        "Lineup-Hook-Wait": str(wait_s),
    }
    if check:
        headers["Lineup-Hook-Mode"] = "check"
    deadline = time.monotonic() + (wait_s + 30 if gate else REPORT_TIMEOUT_S)
    taken = False  # the hub has had the event: keep trying, it may hold a card for it
    while True:
        try:
            return _request(connection.hub, cli, body, headers, deadline)
        except _Lost as lost:
            taken = taken or lost.taken
            if not taken or time.monotonic() + RETRY_EVERY_S >= deadline:
                raise Unreachable(str(lost)) from None
            time.sleep(RETRY_EVERY_S)


class _Lost(Exception):
    def __init__(self, message: str, *, taken: bool) -> None:
        super().__init__(message)
        self.taken = taken


def _request(hub: str, cli: str, body: bytes, headers: dict[str, str], deadline: float) -> bytes:
    scheme, _, rest = hub.partition("://")
    netloc, _, prefix = rest.partition("/")
    if netloc.startswith("["):  # [::1]:8000
        host, _, port_text = netloc[1:].partition("]")
        port_text = port_text.removeprefix(":")
    else:
        host, _, port_text = netloc.partition(":")
    port = int(port_text) if port_text.isdigit() else (443 if scheme == "https" else 80)
    path = "/" + "/".join(p for p in (prefix.strip("/"), f"hooks/v1/{cli}") if p)
    try:
        connection = _connect(host, port, _left(deadline))
    except OSError as error:
        raise _Lost(f"cannot reach {hub}: {error.strerror or error}", taken=False) from None
    try:
        if scheme == "https":
            import socket  # only here, with ssl: together a third of the hook's start-up
            import ssl

            wrapped = socket.socket(fileno=connection.detach())
            wrapped.settimeout(_left(deadline))  # a new socket object blocks: bound the handshake
            connection = ssl.create_default_context().wrap_socket(wrapped, server_hostname=host)
        head = [f"POST {path} HTTP/1.1", f"Host: {netloc}", "Connection: close"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head.append(f"Content-Length: {len(body)}")
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        status, payload = _response(connection, deadline)
    except (OSError, ValueError) as error:
        raise _Lost(f"the connection to {hub} was lost: {error}", taken=True) from None
    finally:
        connection.close()
    if status == 200:
        return payload  # the hook's output, as the CLI reads it
    if status >= 500:
        raise _Lost(f"{hub} answered {status}", taken=True)
    refusal = _parsed(payload).get("error")
    if not isinstance(refusal, dict):
        raise Unreachable(f"{hub} answered {status} without a hook answer")
    detail = f"{refusal.get('code', status)}: {refusal.get('message', '')}".strip()
    hint = refusal.get("hint")
    raise Unreachable(detail + (f" {hint}" if hint else ""))


def _connect(host: str, port: int, timeout: float) -> _socket.socket:
    """``socket.create_connection`` on the C module: each address in turn, the last error
    raised when none takes the connection."""
    error: OSError = OSError(f"no address for {host}")
    # A name given as text is encoded with the idna codec, whose import (re, enum,
    # unicodedata) costs as much as socket's: an ASCII name is passed as bytes.
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    for family, kind, proto, _name, address in _socket.getaddrinfo(
        name, port, 0, _socket.SOCK_STREAM
    ):
        connection = _socket.socket(family, kind, proto)
        try:
            connection.settimeout(timeout)
            connection.connect(address)
            return connection
        except OSError as failed:
            connection.close()
            error = failed
    raise error


def _left(deadline: float) -> float:
    return max(1.0, deadline - time.monotonic())


def _response(connection: Any, deadline: float) -> tuple[int, bytes]:
    """The status and body of an HTTP/1.1 response on a connection the server closes.

    Written on the socket rather than ``http.client``, whose import (with ``email``
    and ``ssl``) took 46 ms of the hook's 85 ms start-up here; the hub's answer always has a
    Content-Length, and anything else in between is read to the end or de-chunked."""
    received = bytearray()
    while b"\r\n\r\n" not in received:
        connection.settimeout(_left(deadline))
        chunk = connection.recv(65536)
        if not chunk:
            raise ValueError("the response ended before its headers")
        received += chunk
    head, _, rest = bytes(received).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    body = bytearray(rest)
    length = fields.get("content-length")
    while length is None or len(body) < int(length):
        connection.settimeout(_left(deadline))
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    if length is not None:
        return status, bytes(body[: int(length)])
    if "chunked" in fields.get("transfer-encoding", ""):
        return status, _dechunked(bytes(body))
    return status, bytes(body)


def _dechunked(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return bytes(out)


def new_ulid() -> str:
    """A ULID (milliseconds, then 80 random bits), as the hub's own ids end."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
