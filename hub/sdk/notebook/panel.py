"""A live view of one task in a notebook: its state, progress, and the card it waits on.

An agent running in a notebook cell asks a person and ``await``s the answer; meanwhile the
cell shows this panel, which follows the task (``Task.watch``): status and progress as
reported, the pending card while the task waits, and the decision once it arrives — from
whichever surface it was taken on. The card here is answerable only when the panel is
given a ``respond`` function (a person's client such as the notebook inbox); the agent's
own credential cannot answer for a person.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hub.sdk.display import escape, task_status_text
from hub.sdk.notebook.cards import CardWidget, Respond
from hub.sdk.notebook.requirements import display, widgets
from hub.sdk.task import Task

WAITING_NOTE = "Waiting for a person: answer it in the hub, by email, Telegram or a notebook inbox."

# respond_for(interaction_id) → a function answering that card, or None (read-only).
RespondFor = Callable[[str], Respond | None]


class TaskPanel:
    def __init__(self, task: Task, *, respond_for: RespondFor | None = None) -> None:
        self.task = task
        self._respond_for = respond_for
        self.title = widgets.HTML(value=f"<strong>{escape(task.title or task.id)}</strong>")
        self.state = widgets.HTML(value="", _dom_classes=("lineup-task-state",))
        self.bar = widgets.IntProgress(value=0, min=0, max=100, description="")
        self.summary = widgets.HTML(value="")
        self.cards = widgets.VBox([])
        self.card: CardWidget | None = None
        self.widget = widgets.VBox(
            [self.title, self.state, self.bar, self.summary, self.cards],
            layout=widgets.Layout(border="1px solid #8a8a8a", padding="6px 10px"),
            _dom_classes=("lineup-task", f"lineup-task-{task.id}"),
        )
        self._watcher = task.watch(self.refresh)
        self.refresh(task)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __str__(self) -> str:
        return str(self.task)

    def close(self) -> None:
        """Stop following the task (the widget keeps its last state)."""
        self.task.unwatch(self._watcher)

    def refresh(self, task: Task) -> None:
        view = task.view()
        self.state.value = f"Status: <strong>{escape(task_status_text(view))}</strong>"
        self.bar.value = max(0, min(100, task.percent or 0))
        text = task.error or task.summary
        self.summary.value = escape(text) if text else ""
        if task.pending is not None:
            if self.card is None or self.card.id != task.pending.id:
                asked = task.pending.wire()
                card_view = {"id": task.pending.id, "card": asked, "status": "pending"}
                respond = self._respond_for(task.pending.id or "") if self._respond_for else None
                note = None if respond else WAITING_NOTE
                self.card = CardWidget(card_view, respond, note=note)
                self.cards.children = [self.card.widget]
        elif self.card is not None and task.answers:
            card, answer = task.answers[-1]
            if card.id == self.card.id:
                self.card.update(answer_view(card.wire(), answer))

    def show(self) -> TaskPanel:
        display(self)
        return self


def answer_view(card: Mapping[str, Any], answer: Any) -> dict[str, Any]:
    return {
        "card": dict(card),
        "status": "resolved",
        "response": answer.response,
        "respondedBy": answer.responded_by,
        "via": answer.via,
        "respondedAt": answer.responded_at.isoformat().replace("+00:00", "Z"),
    }


def live(task: Task, *, respond_for: RespondFor | None = None) -> TaskPanel:
    """Show a live panel for ``task`` in the current cell and return it."""
    return TaskPanel(task, respond_for=respond_for).show()


__all__ = ["TaskPanel", "live"]
