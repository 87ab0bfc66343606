"""Tables of event handlers: which coroutine applies an event type, kept by each concern.

Appending an event applies it in the append's transaction (see ``hub.core.log.events``):
the work projection rebuilds tasks, cards, messages and artifacts from it; the agents'
lifecycle and membership changes keep their entity rows with it. Each of those keeps an
``EventHandlers`` of its own and registers its handlers with ``on``; a type nobody handles
is stored only.

A handler runs inside the append transaction, with the connection it must use, and raises
a ``HubError`` to refuse the event (the transaction then rolls back whole).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hub.core.store.models import Event

Connection = Any  # the transaction's connection (Tortoise's client type is not public)
Handler = Callable[[Event, Connection], Awaitable[None]]


class EventHandlers:
    """One concern's handlers, at most one per event type."""

    def __init__(self) -> None:
        self._by_type: dict[str, Handler] = {}

    def on(self, event_type: str) -> Callable[[Handler], Handler]:
        """Register the decorated coroutine as the handler of ``event_type``."""

        def register(handler: Handler) -> Handler:
            if event_type in self._by_type:
                raise ValueError(f"{event_type!r} has a handler already")
            self._by_type[event_type] = handler
            return handler

        return register

    @property
    def types(self) -> frozenset[str]:
        return frozenset(self._by_type)

    async def apply(self, event: Event, connection: Connection) -> None:
        handler = self._by_type.get(event.type)
        if handler is not None:
            await handler(event, connection)


__all__ = ["Connection", "EventHandlers", "Handler"]
