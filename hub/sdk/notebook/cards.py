"""An interaction card as ipywidgets: the same card every surface shows, answerable by click.

``CardWidget`` renders the card's structure (spec §7.3: why you are needed → impact → what
you can do → details, collapsed) for all four card types:

* approval and review — one button per option and an optional comment; a proposed action
  whose fields the agent marked editable gets a field for each, and approving sends the
  edits (as the web's form does);
* choice — one button per option, or checkboxes and *Submit* when several may be picked;
* input — a text field (a password field when the card says the answer is sensitive) and
  *Submit*.

With a ``respond`` function it is answerable; without one, or once the card is no longer
pending, it is read-only and says who decided what, how and when. A card decided by a
quorum shows its votes so far (who, what, on which surface) and how many approvals it still
needs; once the viewer (``viewer``, their actor ``user:<id>``) voted, their copy says so and
asks no more. Every text the agent wrote is escaped before it reaches an HTML widget: a card
can never inject markup.

The buttons and fields carry CSS classes (``lineup-card-<id>``, ``lineup-option-<id>``,
``lineup-submit``, ``lineup-text``, ``lineup-comment``, ``lineup-confirm``, ``lineup-back``,
``lineup-votes``, ``lineup-status``)
so tests and scripts can find them. A high-risk card asks to confirm an answer before it is
sent (*Confirm* / *Back*), as the web and Telegram do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hub.protocol.actions import action_hash
from hub.protocol.interactions import declines
from hub.sdk.display import card_of, escape, outcome_text
from hub.sdk.notebook.card_parts import (
    action_html,
    details,
    edit_text,
    edit_type,
    header_html,
    parse_edit,
    votes_html,
)
from hub.sdk.notebook.requirements import widgets

logger = logging.getLogger(__name__)

# respond(answer) → the interaction as the hub now shows it (the API's shape).
Respond = Callable[[dict[str, Any]], Awaitable[Mapping[str, Any]]]

_BUTTON_STYLES = {"primary": "primary", "danger": "danger"}


class AnswerRefused(Exception):
    """What a ``respond`` function raises when the hub did not take the answer.

    ``decided`` is the interaction as it stands when someone else answered first: the
    card then turns read-only with their decision instead of showing an error.
    """

    def __init__(self, message: str, *, code: str = "", decided: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.decided = decided


def _html(text: str) -> Any:
    return widgets.HTML(value=text)


class CardWidget:
    """One card; ``display(card_widget)`` shows it, ``update(view)`` refreshes it."""

    def __init__(
        self,
        interaction: Mapping[str, Any],
        respond: Respond | None = None,
        *,
        note: str | None = None,
        web_url: str | None = None,
        viewer: str | None = None,
    ) -> None:
        """``web_url``: the card's page on the hub, where an editable action is edited;
        ``viewer``: the actor (``user:<id>``) this copy is shown to, whose vote it knows."""
        self.view: dict[str, Any] = dict(interaction)
        self.id = str(self.view.get("id") or card_of(self.view).get("id") or "")
        self._respond = respond
        self.viewer = viewer
        self._sending: set[asyncio.Task[None]] = set()
        card = card_of(self.view)
        self.kind = str(card.get("type") or self.view.get("type") or "approval")
        self.controls: list[Any] = []
        self.option_buttons: dict[str, Any] = {}
        self.checkboxes: dict[str, Any] = {}
        self.text: Any = None
        self.comment: Any = None
        self.submit: Any = None
        self.status = widgets.HTML(value="", _dom_classes=self._classes("lineup-status"))
        self.votes = widgets.HTML(value="", _dom_classes=self._classes("lineup-votes"))
        if note:
            self.note: Any = _html(f"<small>{escape(note)}</small>")
        else:
            self.note = None
        # A high-risk card takes a second, deliberate step, as on the web and Telegram.
        self.high_risk = card.get("risk") == "high"
        self._to_confirm: dict[str, Any] | None = None
        self.confirm_text = _html("")
        self.confirm = widgets.Button(
            description="Confirm",
            button_style="danger",
            _dom_classes=self._classes("lineup-confirm"),
        )
        self.back = widgets.Button(description="Back", _dom_classes=self._classes("lineup-back"))
        self.confirm.on_click(lambda _: self._confirmed())
        self.back.on_click(lambda _: self._ask_confirmation(None))
        self.confirm_row = widgets.HBox(
            [self.confirm_text, self.confirm, self.back], layout=widgets.Layout(display="none")
        )
        action = card.get("action")
        # The notebook answers bound to the action it shows, as every other surface does.
        self.action_hash: str | None = None
        self.action: Mapping[str, Any] | None = None
        # An editable field's widget, by field name: what the person changes before approving.
        self.edits: dict[str, Any] = {}
        shown = []
        if isinstance(action, dict):
            self.action = action
            self.action_hash = action_hash(action["kind"], action["fields"])
            shown.append(_html(action_html(action, web_url)))
            shown.extend(self._edit_fields(action))
        parts = [
            _html(header_html(self.view)),
            *shown,
            self.votes,
            *self._controls(card),
            self.confirm_row,
            self.status,
        ]
        if self.note is not None:
            parts.append(self.note)
        folded = details(card)
        if folded is not None:
            parts.append(folded)
        self.widget = widgets.VBox(
            parts,
            layout=widgets.Layout(border="1px solid #8a8a8a", padding="6px 10px", margin="4px 0"),
            _dom_classes=("lineup-card", f"lineup-card-{self.id}"),
        )
        self._refresh()

    # --- what Jupyter asks -------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __str__(self) -> str:
        from hub.sdk.display import interaction_text

        return interaction_text(self.view)

    @property
    def pending(self) -> bool:
        return str(self.view.get("status") or "pending") == "pending"

    @property
    def answerable(self) -> bool:
        return self.pending and self._respond is not None and self.my_vote is None

    @property
    def my_vote(self) -> Mapping[str, Any] | None:
        """The viewer's vote on this quorum card, once they voted."""
        if not self.viewer:
            return None
        votes = self.view.get("votes") or ()
        mine = (v for v in votes if isinstance(v, Mapping) and v.get("actor") == self.viewer)
        return next(mine, None)

    # --- building ----------------------------------------------------------------------

    def _classes(self, *names: str) -> tuple[str, ...]:
        return (f"lineup-card-{self.id}", *names)

    def _controls(self, card: Mapping[str, Any]) -> list[Any]:
        options = [o for o in card.get("options") or () if isinstance(o, Mapping)]
        rows: list[Any] = []
        if self.kind == "input":
            spec = card.get("input") or {}
            field: Any = widgets.Text
            if spec.get("sensitive"):
                field = widgets.Password
            elif spec.get("multiline"):
                field = widgets.Textarea
            self.text = field(
                value="",
                placeholder=str(spec.get("placeholder") or "Type your answer"),
                _dom_classes=self._classes("lineup-text"),
            )
            self.submit = widgets.Button(
                description="Submit",
                button_style="primary",
                _dom_classes=self._classes("lineup-submit"),
            )
            self.submit.on_click(lambda _: self._answer({"text": self.text.value}))
            self.controls += [self.text, self.submit]
            return [self.text, self.submit]
        if self.kind == "choice" and card.get("multiple"):
            upper = card.get("maxSelections") or len(options)
            lower = card.get("minSelections", 1)
            rows.append(_html(f"<em>Pick {escape(lower)} to {escape(upper)} of:</em>"))
            for option in options:
                box = widgets.Checkbox(
                    value=False,
                    description=str(option.get("label")),
                    indent=False,
                    _dom_classes=self._classes(f"lineup-option-{option.get('id')}"),
                )
                self.checkboxes[str(option.get("id"))] = box
                rows.append(box)
            self.submit = widgets.Button(
                description="Submit",
                button_style="primary",
                _dom_classes=self._classes("lineup-submit"),
            )
            self.submit.on_click(lambda _: self._answer({"optionIds": self._picked()}))
            rows.append(self.submit)
            self.controls += [*self.checkboxes.values(), self.submit]
            return rows
        if self.kind in ("approval", "review"):
            self.comment = widgets.Textarea(
                value="",
                placeholder="Comment (optional)",
                rows=1,
                _dom_classes=self._classes("lineup-comment"),
            )
            self.controls.append(self.comment)
        buttons = []
        for option in options:
            option_id = str(option.get("id"))
            label = str(option.get("label"))
            button = widgets.Button(
                description=label + (" (recommended)" if option.get("recommended") else ""),
                button_style=_BUTTON_STYLES.get(str(option.get("style")), ""),
                tooltip=str(option.get("description") or label),
                layout=widgets.Layout(width="auto"),
                _dom_classes=self._classes(f"lineup-option-{option_id}"),
            )
            button.on_click(lambda _, chosen=option_id: self._answer(self._single(chosen)))
            self.option_buttons[option_id] = button
            buttons.append(button)
        self.controls += buttons
        if self.comment is not None:
            rows.append(self.comment)
        rows.append(widgets.HBox(buttons))
        return rows

    def _edit_fields(self, action: Mapping[str, Any]) -> list[Any]:
        """A field per editable value of the action, holding it as text (a list one item a
        line): the same edits the web's form takes, before approving."""
        rows: list[Any] = []
        for name in action.get("editable") or ():
            value = action["fields"].get(name)
            kind = edit_type(value)
            if kind is None:
                continue
            field: Any = widgets.Textarea if kind == "list of text" else widgets.Text
            box = field(
                value=edit_text(value),
                description=str(name),
                style={"description_width": "initial"},
                _dom_classes=self._classes(f"lineup-edit-{name}"),
            )
            self.edits[str(name)] = box
            rows.append(box)
        if rows:
            rows.insert(0, _html("<em>Edit before approving</em> (the agent receives it edited)"))
            self.controls += list(self.edits.values())
        return rows

    def _edited(self) -> dict[str, Any]:
        """The editable fields the person changed, each in the type it holds."""
        if self.action is None:
            return {}
        edited = {}
        for name, box in self.edits.items():
            original = self.action["fields"].get(name)
            value = parse_edit(edit_type(original), str(box.value))
            if value != original:
                edited[name] = value
        return edited

    def _single(self, option_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = {"optionId": option_id}
        if self.action_hash:
            answer["actionHash"] = self.action_hash
        options = card_of(self.view).get("options") or ()
        style = next((o.get("style") for o in options if o.get("id") == option_id), None)
        edited = self._edited()
        if edited and not declines(option_id, style):
            answer["action"] = edited  # a "no" approves nothing, edited or not
        if self.comment is not None and self.comment.value.strip():
            answer["comment"] = self.comment.value.strip()
        return answer

    def _picked(self) -> list[str]:
        return [option_id for option_id, box in self.checkboxes.items() if box.value]

    # --- answering ---------------------------------------------------------------------

    def _answer(self, answer: dict[str, Any]) -> None:
        """A click: on a high-risk card, ask to confirm first; else send the answer."""
        if self.high_risk:
            self._ask_confirmation(answer)
        else:
            self._submit(answer)

    def _ask_confirmation(self, answer: dict[str, Any] | None) -> None:
        if not self.answerable or self._sending:
            answer = None
        self._to_confirm = answer
        if answer is None:
            self.confirm_row.layout.display = "none"
            return
        self.confirm_text.value = (
            f"<strong>⛔ High risk.</strong> You are about to answer: "
            f"{escape(self._describe(answer))}"
        )
        self.confirm_row.layout.display = "flex"

    def _confirmed(self) -> None:
        answer, self._to_confirm = self._to_confirm, None
        self.confirm_row.layout.display = "none"
        if answer is not None:
            self._submit(answer)

    def _describe(self, answer: dict[str, Any]) -> str:
        options = card_of(self.view).get("options") or ()
        labels = {str(o.get("id")): str(o.get("label")) for o in options}
        picked = answer.get("optionIds") or ([answer["optionId"]] if "optionId" in answer else [])
        if picked:
            return ", ".join(labels.get(str(p), str(p)) for p in picked)
        return "the text you typed"

    def _submit(self, answer: dict[str, Any]) -> None:
        """Send the answer in the background (the kernel's loop keeps serving other clicks
        and the cell that may be awaiting meanwhile)."""
        if not self.answerable or self._sending:
            return
        self._set_enabled(False)
        self.status.value = "<em>Sending…</em>"
        job = asyncio.get_running_loop().create_task(self._send(answer))
        self._sending.add(job)
        job.add_done_callback(self._sending.discard)

    async def _send(self, answer: dict[str, Any]) -> None:
        assert self._respond is not None
        try:
            shown = await self._respond(answer)
        except AnswerRefused as refused:
            self._sent()
            if refused.decided is not None:
                self.update(refused.decided)
            else:
                self._set_enabled(True)
                self.status.value = f"<strong>Not sent:</strong> {escape(refused)}"
        except Exception as error:  # shown on the card: a click has no other place to fail
            logger.exception("answering card %s failed", self.id)
            self._sent()
            self._set_enabled(True)
            self.status.value = f"<strong>Not sent:</strong> {escape(error)}"
        else:
            # Sent before the card is redrawn: a vote leaves the card pending, and a card
            # still counted as sending would keep saying "Sending…" with its buttons off.
            self._sent()
            self.update(shown)

    def _sent(self) -> None:
        current = asyncio.current_task()
        if current is not None:
            self._sending.discard(current)

    async def answered(self) -> None:
        """Wait until the answers being sent got the hub's reply (for scripts and tests)."""
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    # --- refreshing --------------------------------------------------------------------

    def update(self, interaction: Mapping[str, Any]) -> None:
        """Show the card as ``interaction`` now stands (decided elsewhere: read-only)."""
        self.view = {**self.view, **dict(interaction)}
        self._refresh()

    def _refresh(self) -> None:
        outcome = outcome_text(self.view)
        self.votes.value = votes_html(self.view)
        mine = self.my_vote
        if outcome is not None:
            # A card taken back by its agent was closed, not decided.
            label = "Closed" if self.view.get("withdrawal") else "Decided"
            self.status.value = f"<strong>{label}:</strong> {escape(outcome)}"
        elif mine is not None:
            self.status.value = (
                f"<strong>You voted: {escape(self._describe(dict(mine)))}.</strong> "
                "The card waits for the other approvers."
            )
        elif not self._sending:
            self.status.value = "" if self._respond else "<em>Waiting for an answer…</em>"
        self._set_enabled(self.answerable and not self._sending)
        if not self.pending:
            self.widget.add_class("lineup-decided")

    def _set_enabled(self, enabled: bool) -> None:
        for control in (*self.controls, self.confirm, self.back):
            control.disabled = not enabled
        if not enabled:
            self._to_confirm = None
            self.confirm_row.layout.display = "none"


__all__ = ["AnswerRefused", "CardWidget", "Respond"]
