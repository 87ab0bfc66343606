"""A real Jupyter kernel (ipykernel over ZeroMQ, driven with jupyter_client) and its widgets,
seen and pressed the way a browser's Jupyter frontend sees and presses them.

The frontend's whole view of a widget is its comm: ``comm_open`` carries the state, ``comm_msg``
``update`` messages change it, and a click or a typed value goes back as a ``comm_msg`` on the
shell channel. ``Kernel`` reads every iopub message in the background (whichever cell or
background task sent it: the inbox redraws its cards from its own task, between cells) and
keeps each widget's state by comm id.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from jupyter_client.manager import AsyncKernelManager

WAIT_S = 30.0


class CellFailed(AssertionError):
    pass


class Kernel:
    def __init__(self) -> None:
        self.manager = AsyncKernelManager(kernel_name="python3")
        self.client: Any = None
        self.widgets: dict[str, dict[str, Any]] = {}
        self._replies: dict[str, list[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, env: Mapping[str, str]) -> Kernel:
        await self.manager.start_kernel(env=dict(env))
        self.client = self.manager.client()
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=60)
        self._reader = asyncio.create_task(self._read())
        return self

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self.client is not None:
            self.client.stop_channels()
        with contextlib.suppress(Exception):
            await self.manager.shutdown_kernel(now=True)

    async def _read(self) -> None:
        while True:
            try:
                message = await self.client.get_iopub_msg(timeout=1)
            except Exception:  # queue.Empty on a quiet second: keep listening
                continue
            kind = message["header"]["msg_type"]
            content = message["content"]
            parent = message["parent_header"].get("msg_id")
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                self.widgets[content["comm_id"]] = dict(content["data"].get("state") or {})
            elif kind == "comm_close":
                self.widgets.pop(content["comm_id"], None)
            elif kind == "comm_msg":
                data = content.get("data") or {}
                if data.get("method") in ("update", "echo_update"):
                    state = self.widgets.setdefault(content["comm_id"], {})
                    state.update(data.get("state") or {})
            elif parent and kind in ("error", "stream", "execute_result", "status"):
                self._replies.setdefault(parent, []).append(message)

    async def run(self, code: str, within: float = 60.0) -> str:
        """Execute ``code`` as a cell; its printed text. A cell that raised fails the test."""
        msg_id = self.client.execute(code)
        async with asyncio.timeout(within):
            while not any(  # noqa: ASYNC110 - the kernel's state, read by another task
                m["header"]["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                for m in self._replies.get(msg_id, [])
            ):
                await asyncio.sleep(0.02)
        messages = self._replies.pop(msg_id)
        errors = [m["content"] for m in messages if m["header"]["msg_type"] == "error"]
        if errors:
            raise CellFailed("\n".join("\n".join(e["traceback"]) for e in errors))
        return "".join(
            m["content"].get("text", "") for m in messages if m["header"]["msg_type"] == "stream"
        )

    # --- the widgets ----------------------------------------------------------------------

    def find(self, *classes: str) -> list[str]:
        """The comm ids of the widgets that carry every CSS class given."""
        return [
            comm_id
            for comm_id, state in list(self.widgets.items())
            if set(classes) <= set(state.get("_dom_classes") or ())
        ]

    async def widget(self, *classes: str, within: float = WAIT_S) -> str:
        async with asyncio.timeout(within):
            while not (found := self.find(*classes)):  # noqa: ASYNC110 - kernel state
                await asyncio.sleep(0.02)
        assert len(found) == 1, found
        return found[0]

    async def until(
        self, comm_id: str, key: str, holds: Callable[[Any], bool], within: float = WAIT_S
    ) -> Any:
        """The widget's ``key`` once ``holds(value)``: updates arrive on the kernel's time."""
        try:
            async with asyncio.timeout(within):
                while not holds(value := self.widgets[comm_id].get(key)):  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
        except TimeoutError:
            raise AssertionError(
                f"widget {comm_id} {key}={self.widgets[comm_id].get(key)!r} never held"
            ) from None
        return value

    def value(self, comm_id: str, key: str = "value") -> Any:
        return self.widgets[comm_id].get(key)

    def click(self, comm_id: str) -> None:
        """What a browser sends when a person presses a Button."""
        self._send(comm_id, {"method": "custom", "content": {"event": "click"}})

    def set_value(self, comm_id: str, value: Any, key: str = "value") -> None:
        """What a browser sends when a person types into a field or ticks a box (or picks
        an entry of a list: ``key`` ``index``, which a selection widget syncs)."""
        self._send(comm_id, {"method": "update", "state": {key: value}, "buffer_paths": []})
        self.widgets[comm_id][key] = value

    def _send(self, comm_id: str, data: dict[str, Any]) -> None:
        message = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(message)
