"""Feishu's long connection (events and card presses with no public URL), run beside the hub.

lark-oapi's ``lark_oapi.ws.Client`` speaks the long connection: it asks
``{domain}/callback/ws/endpoint`` for a WebSocket address, holds the protobuf-framed
socket, pings, reconnects, and answers each event frame with what the event handler
returns. It was written to own its process, and four of its habits rule out running it on
the hub's event loop:

* every task it makes goes to a module-level ``loop`` captured at import
  (``lark_oapi.ws.client.loop``), not to the running loop;
* ``Client.start()`` blocks on ``loop.run_until_complete`` of a coroutine that never
  returns, and the client has no stop;
* the endpoint call is a blocking ``requests.post`` without a timeout;
* event handlers are synchronous: a card press's answer (a toast, the redrawn card) is the
  handler's return value, while deciding needs the hub's database, which is async.

So the connection gets a thread and an event loop of its own. That loop runs the SDK's own
coroutines (``_connect``, which starts the receive loop; ``_ping_loop``), with the module's
``loop`` pointed at it and its endpoint call given a timeout. The synchronous handlers hand
their work to the hub's loop (``asyncio.run_coroutine_threadsafe``) and wait for the answer
a bounded time; the hub's loop never waits on this thread. ``stop()`` turns reconnecting
off, closes the socket, cancels the loop's tasks, stops the loop and joins the thread, all
within a bound: a thread stuck in a call that ignores the timeout is a daemon, and is
reported, never waited on past it.

One connection per process: the SDK's ``loop`` is a module global.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import threading

import lark_oapi.core.log as lark_log
import requests
from lark_oapi import LogLevel
from lark_oapi.event.dispatcher_handler import EventDispatcherHandler
from lark_oapi.ws import client as ws_client

logger = logging.getLogger(__name__)

# The SDK prints its log lines to stdout through a handler of its own; the hub's logging
# (text or JSON, redacted) is where they belong, so they go up to the root logger instead.
lark_log.logger.removeHandler(lark_log.handler)

_CREDENTIALS_IN_ADDRESS = re.compile(r"\b((?:access_key|ticket)=)[^&\s]+")


class _HideAddressCredentials(logging.Filter):
    """The long connection's address authenticates it (its ``access_key`` and ``ticket``),
    and the websockets library logs the request line at DEBUG: those values are hidden."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _CREDENTIALS_IN_ADDRESS.search(message):
            record.msg, record.args = _CREDENTIALS_IN_ADDRESS.sub(r"\1[redacted]", message), ()
        return True


logging.getLogger("websockets.client").addFilter(_HideAddressCredentials())


def forget_import_loop() -> None:
    """Close the event loop lark-oapi made for itself if it was imported outside a running
    loop (it calls ``asyncio.get_event_loop()`` at import, which then makes one and sets it
    as the thread's own). Nothing runs on it: each connection points the SDK at its own."""
    loop = ws_client.loop
    if not loop.is_running() and not loop.is_closed():
        loop.close()
        asyncio.set_event_loop(None)


forget_import_loop()

ENDPOINT_TIMEOUT_S = 10.0
_ONE_PER_PROCESS = threading.Lock()


class _Requests:
    """What the SDK's ws module calls ``requests``: the same, with a timeout on ``post``."""

    post = staticmethod(functools.partial(requests.post, timeout=ENDPOINT_TIMEOUT_S))


class LongConnection:
    def __init__(
        self,
        app_id: str,
        app_secret: str,
        domain: str,
        dispatcher: EventDispatcherHandler,
    ) -> None:
        self.app_id = app_id
        self.app_secret = app_secret
        self.domain = domain
        self.dispatcher = dispatcher
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: ws_client.Client | None = None
        self._held = False

    @property
    def connected(self) -> bool:
        return self._client is not None and self._client._conn is not None

    # --- the hub's side -------------------------------------------------------------------

    async def start(self, timeout_s: float = 15.0) -> None:
        """Connect; returns once the socket is open, raises if the first attempt fails."""
        if self._thread is not None:
            return
        if not _ONE_PER_PROCESS.acquire(blocking=False):
            raise RuntimeError("a Feishu long connection is already running in this process")
        self._held = True
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=_run_forever, args=(loop,), name="feishu-long-connection", daemon=True
        )
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            await asyncio.wait_for(
                asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._connect(), loop)),
                timeout_s,
            )
        except BaseException:
            await self.stop()
            raise

    async def stop(self, timeout_s: float = 5.0) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        try:
            if loop is None or thread is None:
                return
            if loop.is_running():
                stopping = asyncio.run_coroutine_threadsafe(self._close(), loop)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.wrap_future(stopping), timeout_s)
                loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, timeout_s)
            if thread.is_alive():
                logger.warning(
                    "the Feishu long connection's thread did not end in %.0fs", timeout_s
                )
            else:
                loop.close()
        finally:
            self._client = None
            if self._held:
                self._held = False
                _ONE_PER_PROCESS.release()

    # --- on the connection's own loop -----------------------------------------------------

    async def _connect(self) -> None:
        # Made here: the client's cache starts a task on the loop current at its creation.
        ws_client.loop = asyncio.get_running_loop()
        ws_client.requests = _Requests
        client = ws_client.Client(
            self.app_id,
            self.app_secret,
            log_level=LogLevel.WARNING,
            event_handler=self.dispatcher,
            domain=self.domain,
            auto_reconnect=True,
        )
        self._client = client
        await client._connect()
        asyncio.get_running_loop().create_task(client._ping_loop())

    async def _close(self) -> None:
        """The SDK's tasks first (its receive loop would otherwise see the socket close and
        reconnect, or race the close for the client's lock), then the socket."""
        client = self._client
        if client is not None:
            client._auto_reconnect = False
        # The SDK's ping loop sleeps in a ``finally``: a task cancelled in the middle of a
        # ping would sleep on, so whatever outlives one cancel gets another.
        current = asyncio.current_task()
        for _ in range(3):
            tasks = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
            if not tasks:
                break
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=1.0)
        socket = client._conn if client is not None else None
        if socket is not None:
            client._conn = None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), 2.0)


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()
