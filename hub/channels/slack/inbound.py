"""What reaches the hub from Slack, whichever way it comes: interactions and events.

Transport apart from dispatch: Socket Mode (``socket_mode``) and the HTTP endpoints
(``endpoints``) both hand what they received to an ``Inbound``, which answers a
``view_submission`` at once (its answer goes back to Slack: errors to show on a field, the
modal's next step) and everything else after Slack has been told the request arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)

# Slack's own time limit for answering a request is 3 s; a modal's answer must beat it.
ANSWER_WITHIN_S = 2.5


class Inbound:
    """Hands interactions to ``on_interaction`` and events to ``on_event``, and keeps the
    work started after an acknowledgement, so a stop can wait for it (bounded)."""

    def __init__(
        self,
        on_interaction: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]],
        on_event: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        self.on_interaction = on_interaction
        self.on_event = on_event
        self._running: set[asyncio.Task[Any]] = set()

    @staticmethod
    def answers_at_once(payload: dict[str, Any]) -> bool:
        """Whether Slack waits for this interaction's answer (a modal's submission)."""
        return payload.get("type") == "view_submission"

    async def answer(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to a modal's submission: None closes the modal."""
        try:
            return await asyncio.wait_for(self.on_interaction(payload), ANSWER_WITHIN_S)
        except Exception:
            logger.exception("answering a Slack modal failed")
            return None

    def interaction_later(self, payload: dict[str, Any]) -> None:
        self._later(self.on_interaction(payload), "a Slack interaction")

    def event_later(self, payload: dict[str, Any]) -> None:
        self._later(self.on_event(payload), "a Slack event")

    def _later(self, work: Coroutine[Any, Any, Any], what: str) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                logger.exception("handling %s failed", what)

        task = asyncio.create_task(run())
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def stop(self, within_s: float = 5.0) -> None:
        """Wait for the work under way, then cancel what is left."""
        running = set(self._running)
        if running:
            _done, late = await asyncio.wait(running, timeout=within_s)
            for task in late:
                task.cancel()
            for task in late:
                with contextlib.suppress(BaseException):
                    await task
