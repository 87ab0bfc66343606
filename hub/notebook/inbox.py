"""The notebook inbox: the person's pending cards as widgets, answered by clicking, live.

``await hub.open_inbox()`` loads the cards waiting for the person, shows each as a
``CardWidget`` and then follows the workspace's log over ``/ws/client``: a card an agent
asks later appears, and a card decided anywhere else (web, email, Telegram, another
notebook) turns read-only with who decided what, how and when; one its agent withdrew (the
person answered in the agent's terminal, say) turns read-only saying so. Answers given here
go through the JSON API and are recorded ``via: notebook``.

Two or more approvals of one task also show together, above the cards, answered all at once
or item by item (``hub.notebook.batches``).

Everything runs on the kernel's own event loop; clicks are served while another cell
``await``s (ipykernel ≥ 7.4), so one notebook can both wait on an agent and answer it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from hub.notebook.batches import BatchWidget, batchable
from hub.notebook.feed import ClientFeed, FeedRefused
from hub.sdk.display import escape
from hub.sdk.notebook.cards import CardWidget, Respond
from hub.sdk.notebook.requirements import widgets

logger = logging.getLogger(__name__)

# Events after which a card shown here may read differently.
# A vote leaves a quorum card pending with one more vote to show.
_CARD_EVENTS = frozenset(
    {"interaction.voted", "interaction.resolved", "interaction.expired", "interaction.withdrawn"}
)
_TERMINAL_TASK = frozenset({"succeeded", "failed", "cancelled"})


class PersonHub(Protocol):
    """What the inbox asks of the person's client of the hub (``hub.notebook.Hub``)."""

    url: str
    token: str
    workspace_id: str

    async def log_position(self) -> tuple[str, int]: ...

    async def me(self) -> Mapping[str, Any]: ...

    async def task(self, task_id: str) -> Mapping[str, Any]: ...

    async def decide(self, task_id: str, items: list[dict[str, Any]]) -> Mapping[str, Any]: ...

    async def inbox(self) -> dict[str, Any]: ...

    async def interaction(self, interaction_id: str) -> Mapping[str, Any]: ...

    def responder(self, interaction_id: str) -> Respond: ...

    def card_page(self, interaction_id: str) -> str: ...


class Inbox:
    def __init__(self, hub: PersonHub) -> None:
        self.hub = hub
        self.cards: dict[str, CardWidget] = {}
        self.heading = widgets.HTML(value="")
        self.list = widgets.VBox([])
        self.batches: dict[str, BatchWidget] = {}  # by task: its approvals answered together
        self.batch_list = widgets.VBox([])
        self.problem = widgets.HTML(value="")
        self.widget = widgets.VBox(
            [self.heading, self.problem, self.batch_list, self.list],
            _dom_classes=("lineup-inbox",),
        )
        self.feed: ClientFeed | None = None
        self.viewer: str | None = None  # "user:<id>": whose votes the cards know as mine
        self._follower: asyncio.Task[None] | None = None
        self.changed = asyncio.Condition()  # notified after each change (tests, scripts)

    @classmethod
    async def open(cls, hub: PersonHub) -> Inbox:
        inbox = cls(hub)
        await inbox.start()
        return inbox

    async def start(self) -> None:
        # The log position first, then the cards: an event in between is replayed by the
        # feed and handled again, which changes nothing (cards are keyed by id).
        self.viewer = f"user:{(await self.hub.me())['userId']}"
        epoch, position = await self.hub.log_position()
        await self.reload()
        self.feed = ClientFeed(
            self.hub.url,
            self.hub.token,
            self.hub.workspace_id,
            after=position,
            epoch=epoch,
            on_resync=self.reload,
        )
        self._follower = asyncio.get_running_loop().create_task(self._follow())

    async def close(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
            self._follower = None

    async def __aenter__(self) -> Inbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- what Jupyter asks -------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __str__(self) -> str:
        return "\n\n".join(str(card) for card in self.cards.values()) or "Nothing waiting for you."

    @property
    def pending(self) -> list[CardWidget]:
        return [card for card in self.cards.values() if card.pending]

    def card(self, interaction_id: str) -> CardWidget:
        return self.cards[interaction_id]

    async def wait_for(self, condition: Any, timeout_s: float = 30.0) -> None:
        """Wait until ``condition(inbox)`` holds (checked after every change)."""

        async def until() -> None:
            async with self.changed:
                await self.changed.wait_for(lambda: condition(self))

        await asyncio.wait_for(until(), timeout_s)

    # --- keeping up ----------------------------------------------------------------------

    async def reload(self) -> None:
        """Fetch every card waiting for the person; cards shown before and decided since
        are refreshed (they stay, read-only, so the decision can be seen)."""
        box = await self.hub.inbox()
        waiting = box.get("waitingForMe") or []
        for item in waiting:
            shown = item["interaction"]
            if shown.get("votes"):  # the list's view lacks the voters' names
                shown = dict(await self.hub.interaction(str(shown["id"])))
            self._show({**shown, "task": item.get("task"), "agent": item.get("agent")})
        still = {item["interaction"]["id"] for item in waiting}
        for interaction_id, card in self.cards.items():
            if card.pending and interaction_id not in still:
                card.update(dict(await self.hub.interaction(interaction_id)))
        await self._changed()

    async def _follow(self) -> None:
        assert self.feed is not None
        try:
            async for event in self.feed.events():
                try:
                    await self._handle(event)
                except Exception as error:  # one odd event must not stop the inbox
                    logger.exception("inbox: event %s not shown", event.get("sequence"))
                    self.problem.value = f"<small>Could not show an event: {escape(error)}</small>"
        except FeedRefused as refused:
            self.problem.value = f"<strong>The hub closed the inbox:</strong> {escape(refused)}"

    async def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        payload = event.get("payload") or {}
        if kind == "interaction.requested":
            card_id = (payload.get("interaction") or {}).get("id")
            if card_id and card_id not in self.cards:
                self._show(dict(await self.hub.interaction(str(card_id))))
        elif kind in _CARD_EVENTS:
            card_id = payload.get("interactionId")
            if card_id in self.cards:
                self.cards[card_id].update(dict(await self.hub.interaction(card_id)))
        elif kind == "task.status_changed" and payload.get("status") in _TERMINAL_TASK:
            # A task that ends withdraws its open cards.
            for card_id, card in list(self.cards.items()):
                if card.pending and card.view.get("taskId") == payload.get("taskId"):
                    card.update(dict(await self.hub.interaction(card_id)))
        else:
            return
        await self._changed()

    def _show(self, view: dict[str, Any]) -> None:
        card_id = str(view["id"])
        if card_id in self.cards:
            self.cards[card_id].update(view)
            return
        card = CardWidget(
            view,
            self.hub.responder(card_id),
            web_url=self.hub.card_page(card_id),
            viewer=self.viewer,
        )
        self.cards[card_id] = card
        self.list.children = (*self.list.children, card.widget)

    async def _offer_batches(self) -> None:
        """A batch widget for each task with two or more approvals waiting here; one shown
        before is redrawn as its cards change."""
        by_task: dict[str, list[CardWidget]] = {}
        for card in self.cards.values():
            task_id = card.view.get("taskId")
            if task_id and batchable(card):
                by_task.setdefault(str(task_id), []).append(card)
        for task_id, waiting in by_task.items():
            if len(waiting) >= 2 and task_id not in self.batches:
                task = await self.hub.task(task_id)
                batch = BatchWidget(task_id, str(task.get("title") or ""), self.hub.decide)
                self.batches[task_id] = batch
                self.batch_list.children = (*self.batch_list.children, batch.widget)
        for task_id, batch in self.batches.items():
            waiting = by_task.get(task_id, [])
            batch.show(waiting if len(waiting) >= 2 else batch.cards)

    async def _changed(self) -> None:
        await self._offer_batches()
        waiting = len(self.pending)
        self.heading.value = (
            f"<strong>Waiting for you: {waiting}</strong>"
            if waiting
            else "<strong>Nothing waiting for you.</strong>"
        )
        async with self.changed:
            self.changed.notify_all()


__all__ = ["Inbox", "PersonHub"]
