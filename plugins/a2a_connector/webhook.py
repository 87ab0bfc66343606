"""``POST /a2a/push/{task}``: where a remote agent posts a change of a task it carries.

The hub registers this address, with a token of its own for the task, with every remote
agent whose card offers push notifications (``plugins.a2a_connector.updates``). The SDK's
sender (a2a-sdk's ``BasePushNotificationSender``) posts the changed task, status or artifact
as a ``StreamResponse`` with the token in ``X-A2A-Notification-Token``; a2a-go spells it
``A2A-Notification-Token``; either is read. A2A's JWT scheme is not offered: no SDK sends it.

A push is only a hint. Its body is never applied to the task: an authentic push makes the
hub read the task from the remote through its client (``GetTask``), so what the hub keeps
is always what the remote answers over the guarded outbound connection, and a push can
change nothing on its own. Before that, in this order, each refusal changing nothing:

* the token must be the task's (401): derived from the hub's secret and the task id, so
  it is never stored, differs for every task, and one task's token opens no other; a
  source that keeps sending wrong ones is answered 429 for the rest of the minute (the
  right token still passes: a remote behind the same address as a scanner keeps working);
* the body must be a JSON object of at most ``MAX_PUSH_BYTES`` (413, 422);
* the task must be one the hub sent to a remote and has not finished, and a task id in
  the body must be the remote's own id for it (404);
* a body seen before for the task (a replay, or a sender's retry) is answered as a
  duplicate (200) and wakes nothing.

The host's guards hold here as on every route: an impossible id in the path is a 404
before this view runs, the access log names the route and never the path or a header.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any

from quart import Blueprint, Response, jsonify, request

from hub.core.errors import InvalidInput, NotFound, PayloadTooLarge, Unauthorized
from hub.core.people.ratelimit import FailureLimiter
from hub.core.store.remote_models import RemoteCall
from hub.host.client_address import client_address
from hub.protocol.clock import utcnow

PUSH_PATH = "/a2a/push"
TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")
MAX_PUSH_BYTES = 1_000_000
DRAINED_BYTES = 4 * MAX_PUSH_BYTES
REMEMBERED_PER_TASK = 64
REMEMBERED_TASKS = 10_000
# Tokens are 256-bit HMACs, beyond guessing; the cap is for a sender stuck with an old
# token (the hub's secret changed) or someone scanning.
TOKEN_FAILURES = FailureLimiter(
    per_source=30,
    overall=3_000,
    window_s=60.0,
    code="a2a_push_rate_limited",
    what="push notification tokens",
)


def push_token(secret_key: str, call_id: str) -> str:
    """The token a remote must send with pushes about the hub task ``call_id``."""
    message = f"a2a-push-token\x00{call_id}".encode()
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()


def push_url(public_url: str, call_id: str) -> str:
    return f"{public_url.rstrip('/')}{PUSH_PATH}/{call_id}"


class Unauthentic(Unauthorized):
    code = "a2a_push_unauthorized"
    hint = "Send the token the hub registered for this task in X-A2A-Notification-Token."


class UnknownTask(NotFound):
    code = "a2a_push_unknown_task"
    hint = "The hub follows no such task any more; stop pushing it."


class SeenPushes:
    """Digests of the bodies pushed lately, per task, in this process's memory: bounded
    per task and in tasks, least recently pushed forgotten first. A replay older than
    that (or sent to another hub process) only makes the hub read the task once more."""

    def __init__(self) -> None:
        self._by_task: OrderedDict[str, deque[str]] = OrderedDict()

    def first_time(self, call_id: str, body: bytes) -> bool:
        digest = hashlib.sha256(body).hexdigest()
        seen = self._by_task.pop(call_id, None) or deque(maxlen=REMEMBERED_PER_TASK)
        self._by_task[call_id] = seen
        while len(self._by_task) > REMEMBERED_TASKS:
            self._by_task.popitem(last=False)
        if digest in seen:
            return False
        seen.append(digest)
        return True


def pushed_task_id(push: dict[str, Any]) -> str | None:
    """The remote task a push names: a v1.0 ``StreamResponse`` (``task``, ``statusUpdate``,
    ``artifactUpdate``) or, as v0.3 senders post, the task or event itself."""
    for kind in ("task", "statusUpdate", "artifactUpdate"):
        inner = push.get(kind)
        if isinstance(inner, dict):
            push = inner
            break
    named = push.get("taskId") if "taskId" in push else push.get("id")
    return named if isinstance(named, str) and named else None


def _given_token() -> str:
    for header in TOKEN_HEADERS:
        value = request.headers.get(header)
        if value:
            return value
    return ""


async def _body() -> bytes:
    """The body, refused past ``MAX_PUSH_BYTES``. A body a little past it is still read to
    its end, and dropped, so that its sender hears the refusal: answering while it is
    still sending closes the connection under it, and it sees a reset instead."""
    if (request.content_length or 0) > DRAINED_BYTES:
        raise _too_large()
    body = bytearray()
    size = 0
    async for chunk in request.body:
        size += len(chunk)
        if size > DRAINED_BYTES:
            break
        if size <= MAX_PUSH_BYTES:
            body += chunk
    if size > MAX_PUSH_BYTES:
        raise _too_large()
    return bytes(body)


def _too_large() -> PayloadTooLarge:
    return PayloadTooLarge(
        f"A push may be at most {MAX_PUSH_BYTES} bytes.",
        code="a2a_push_too_large",
        hint="The hub reads the task itself; the push needs to name it only.",
    )


def push_blueprint(secret_key: str, wake: Callable[[str], Awaitable[None]]) -> Blueprint:
    """The webhook; ``wake(call_id)`` tells the connector the remote changed the task."""
    blueprint = Blueprint("a2a_push", __name__)
    seen = SeenPushes()

    @blueprint.post(f"{PUSH_PATH}/<task_id>")
    async def receive_push(task_id: str) -> tuple[Response, int]:
        expected = push_token(secret_key, task_id)
        if not hmac.compare_digest(_given_token().encode(), expected.encode()):
            # Checked after the token, not before: a remote sharing its address with
            # someone scanning (a NAT, a proxy) must not lose its pushes to them.
            source = client_address()
            TOKEN_FAILURES.check(source)
            TOKEN_FAILURES.record_failure(source)
            raise Unauthentic("The push carries no token, or not this task's.")
        body = await _body()
        try:
            push = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            push = None
        if not isinstance(push, dict):
            raise InvalidInput(
                "A push must be a JSON object.",
                code="invalid_a2a_push",
                hint="Post the task's StreamResponse as JSON.",
            )
        call = await RemoteCall.filter(id=task_id).first()
        named = pushed_task_id(push)
        if (
            call is None
            or call.finished
            or call.remote_task_id is None
            or (named is not None and named != call.remote_task_id)
        ):
            raise UnknownTask("The hub follows no such remote task.")
        if not seen.first_time(task_id, body):
            return jsonify({"accepted": False, "duplicate": True}), 200
        await wake(task_id)  # first: the read need not wait for this write
        await RemoteCall.filter(id=task_id).update(last_push_at=utcnow())
        return jsonify({"accepted": True, "duplicate": False}), 202

    return blueprint


__all__ = [
    "PUSH_PATH",
    "SeenPushes",
    "push_blueprint",
    "push_token",
    "push_url",
    "pushed_task_id",
]
