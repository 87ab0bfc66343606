"""Several approvals of one task answered together in the notebook inbox.

Once two or more approvals of one task wait in the inbox, a ``BatchWidget`` above the cards
lists them with **Approve all (N)**, **Reject all (N)**, and a choice per item (approve,
reject, or leave it) sent with **Send these choices** — the web's batch form, as widgets.
What it sends names exactly the cards it shows (``POST …/tasks/{task}/decisions``, recorded
``via: notebook``), each answer bound to the action its card shows; a card someone answered
first is reported by name and the rest apply. Approving a high-risk card takes the ticked
confirmation first, as a single high-risk card takes a second step. The cards' own widgets
turn read-only as the inbox hears of each decision.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hub.sdk.display import escape
from hub.sdk.notebook.cards import CardWidget
from hub.sdk.notebook.requirements import widgets

logger = logging.getLogger(__name__)

# decide(task_id, items) → the API's {batchId, taskId, items: [outcome]}.
Decide = Callable[[str, list[dict[str, Any]]], Awaitable[Mapping[str, Any]]]
_LEAVE, _APPROVE, _REJECT = "", "approve", "reject"


def batchable(card: CardWidget) -> bool:
    """An approval offering both "approve" and "reject", waiting for this person."""
    options = {str(o.get("id")) for o in (card.view.get("card") or {}).get("options") or ()}
    return card.kind == "approval" and {_APPROVE, _REJECT} <= options and card.answerable


class BatchWidget:
    def __init__(self, task_id: str, task_title: str, decide: Decide) -> None:
        self.task_id = task_id
        self.cards: list[CardWidget] = []
        self._decide = decide
        self._sending: asyncio.Task[None] | None = None
        self.heading = widgets.HTML(value="")
        self.items = widgets.VBox([])
        self.choices: dict[str, Any] = {}
        self.confirm = widgets.Checkbox(
            value=False,
            description="I have read the impact of the high-risk cards and want to go ahead",
            indent=False,
            layout=widgets.Layout(display="none", width="auto"),
            _dom_classes=self._classes("lineup-batch-confirm"),
        )
        self.approve_all = widgets.Button(
            button_style="primary", _dom_classes=self._classes("lineup-approve-all")
        )
        self.reject_all = widgets.Button(
            button_style="danger", _dom_classes=self._classes("lineup-reject-all")
        )
        self.send_items = widgets.Button(
            description="Send these choices", _dom_classes=self._classes("lineup-send-items")
        )
        self.approve_all.on_click(lambda _: self._send_all(_APPROVE))
        self.reject_all.on_click(lambda _: self._send_all(_REJECT))
        self.send_items.on_click(
            lambda _: self._send({k: v.value for k, v in self.choices.items()})
        )
        self.status = widgets.HTML(value="", _dom_classes=self._classes("lineup-batch-status"))
        self.task_title = task_title
        self.widget = widgets.VBox(
            [
                self.heading,
                self.items,
                self.confirm,
                widgets.HBox([self.approve_all, self.reject_all, self.send_items]),
                self.status,
            ],
            layout=widgets.Layout(border="2px solid #8a8a8a", padding="6px 10px", margin="4px 0"),
            _dom_classes=self._classes("lineup-batch"),
        )

    def _classes(self, *names: str) -> tuple[str, ...]:
        return (f"lineup-batch-{self.task_id}", *names)

    @property
    def pending(self) -> list[CardWidget]:
        return [card for card in self.cards if card.pending and card.answerable]

    def show(self, cards: list[CardWidget]) -> None:
        """List ``cards`` (the task's approvals waiting now); not while an answer is sent."""
        if self._sending is not None:
            return
        if [c.id for c in cards] != [c.id for c in self.cards]:
            self.cards = list(cards)
            kept = {card.id: self.choices.pop(card.id, None) for card in self.cards}
            for dropped in self.choices.values():
                dropped.close()
            self.choices = {card.id: kept[card.id] or self._choice(card) for card in self.cards}
            self.items.children = tuple(self.choices.values())
        self._refresh()

    def _choice(self, card: CardWidget) -> Any:
        return widgets.Dropdown(
            options=[("—", _LEAVE), ("Approve", _APPROVE), ("Reject", _REJECT)],
            value=_LEAVE,
            description=str((card.view.get("card") or {}).get("title") or card.id)[:60],
            style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
            _dom_classes=self._classes(f"lineup-item-{card.id}"),
        )

    def _refresh(self) -> None:
        count = len(self.pending)
        self.heading.value = (
            f"<strong>{count} approvals wait in “{escape(self.task_title)}”</strong>"
            "<div><small>Answer them together, or item by item.</small></div>"
        )
        self.approve_all.description = f"Approve all ({count})"
        self.reject_all.description = f"Reject all ({count})"
        risky = any(card.high_risk for card in self.pending)
        self.confirm.layout.display = "flex" if risky else "none"
        # Two or more, as on the web: a single card left is answered on its own widget.
        open_ = count >= 2 and self._sending is None
        for control in (self.approve_all, self.reject_all, self.send_items, self.confirm):
            control.disabled = not open_
        for card in self.cards:
            self.choices[card.id].disabled = not (open_ and card in self.pending)

    def _picked(self) -> dict[str, str]:
        return {card_id: choice.value for card_id, choice in self.choices.items()}

    def _send_all(self, option_id: str) -> None:
        self._send({card.id: option_id for card in self.pending})

    def _send(self, picks: dict[str, str]) -> None:
        if self._sending is not None:
            return
        shown = {card.id: card for card in self.pending}
        chosen = {k: v for k, v in picks.items() if k in shown and v in (_APPROVE, _REJECT)}
        if not chosen:
            self.status.value = "<strong>Not sent:</strong> pick an answer for at least one card."
            return
        risky = any(shown[k].high_risk and v == _APPROVE for k, v in chosen.items())
        if risky and not self.confirm.value:
            self.status.value = (
                "<strong>Not sent:</strong> approving a high-risk card needs the "
                "confirmation ticked."
            )
            return
        items = [
            {"interactionId": card_id, "response": _answer(shown[card_id], option_id)}
            for card_id, option_id in chosen.items()
        ]
        self.status.value = "<em>Sending…</em>"
        self._sending = asyncio.get_running_loop().create_task(self._deliver(items))
        self._refresh()

    async def _deliver(self, items: list[dict[str, Any]]) -> None:
        try:
            result = await self._decide(self.task_id, items)
        except Exception as error:  # shown here: a click has no other place to fail
            logger.exception("answering the batch of task %s failed", self.task_id)
            self.status.value = f"<strong>Not sent:</strong> {escape(error)}"
        else:
            self.status.value = _recorded(result, {c.id: c for c in self.cards})
            for outcome in result.get("items") or ():
                card = next((c for c in self.cards if c.id == outcome.get("interactionId")), None)
                if card is not None and isinstance(outcome.get("interaction"), Mapping):
                    card.update(outcome["interaction"])
        finally:
            self._sending = None
            self.confirm.value = False
            self._refresh()

    async def answered(self) -> None:
        """Wait until an answer being sent got the hub's reply (for scripts and tests)."""
        if self._sending is not None:
            await asyncio.gather(self._sending, return_exceptions=True)


def _answer(card: CardWidget, option_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = {"optionId": option_id}
    if card.action_hash:
        answer["actionHash"] = card.action_hash  # bound to the action the card shows
    return answer


def _recorded(result: Mapping[str, Any], cards: Mapping[str, CardWidget]) -> str:
    outcomes = list(result.get("items") or ())
    decided = sum(1 for item in outcomes if item.get("outcome") == "decided")
    lines = [f"<strong>Recorded {decided} answers.</strong>"]
    for item in outcomes:
        if item.get("outcome") == "decided":
            continue
        card = cards.get(str(item.get("interactionId")))
        title = (card.view.get("card") or {}).get("title") if card else item.get("interactionId")
        lines.append(f"“{escape(title)}”: {escape(item.get('message') or item.get('outcome'))}")
    return "<br>".join(lines)


__all__ = ["BatchWidget", "batchable"]
