"""Cards as Feishu/Lark interactive message cards (card JSON 2.0).

Every word an agent wrote is a ``plain_text`` element: Feishu shows it as typed, never as
markdown, never as an ``<at>`` mention that pings someone. Only the hub's own fixed words
are ever styled, and none of them goes through ``lark_md`` either: a heading is plain text
in a bigger size.

A pending card's controls depend on its kind and on the state of its message
(``DeliveredCard.state``): buttons per option; the second, confirming button of a high-risk
choice; a form for what takes input (a multiple choice, a typed answer, a review's comment,
an action's editable fields). Each control's callback value is the delivered card's opaque
id, an action letter and an option's position (``hub.channels.feishu.presses``): the card's
identity stays on the server. A decided card has no controls at all.

Everything here speaks the language in effect: the channel sets it to the recipient's.
"""

from __future__ import annotations

import json
from typing import Any

from hub.channels.action_view import ActionView
from hub.channels.base import Capabilities
from hub.channels.cards import Card, Notice
from hub.channels.feishu.presses import CardAction, card_value
from hub.channels.wording import (
    agent_text,
    outcome_text,
    policy_lines,
    risk_text,
    voted_text,
    when,
)
from hub.i18n import gettext as _

# Feishu refuses a card over 30 KB; what would not fit is linked to the web instead.
MAX_CARD_BYTES = 28_000
# An input field holds at most this many characters.
MAX_INPUT_CHARS = 1000
REQUEST_CHANGES = "request_changes"
TEXT_FIELD = "text"
COMMENT_FIELD = "comment"
CHOICES_FIELD = "choices"
COLOURS = {"high": "red", "medium": "orange", "low": "blue"}


def plain(text: str, **style: Any) -> dict[str, Any]:
    return {"tag": "plain_text", "content": text, **style}


def line(text: str, **style: Any) -> dict[str, Any]:
    """A block of plain text."""
    return {"tag": "div", "text": plain(text, **style)}


def heading(text: str) -> dict[str, Any]:
    return line(text, text_size="heading-4")


def card_json(
    header: dict[str, Any], elements: list[dict[str, Any]], summary: str
) -> dict[str, Any]:
    return {
        "schema": "2.0",
        # Shared: a redraw (a press, a decision elsewhere) is seen by everyone in the chat.
        "config": {"update_multi": True, "summary": {"content": summary}},
        "header": header,
        "body": {"elements": elements},
    }


def _header(card: Card) -> dict[str, Any]:
    about = agent_text(card)
    if card.task_title:
        about += f" · {_('Task')}: {card.task_title}"
    colour = "grey" if not card.is_pending else COLOURS.get(str(card.risk or ""), "blue")
    return {"title": plain(card.title), "subtitle": plain(about), "template": colour}


def card_message(
    card: Card,
    short_id: str,
    state: dict[str, Any],
    capabilities: Capabilities,
    *,
    web_link: str,
) -> tuple[dict[str, Any], bool]:
    """The card's message and whether it fits natively; a card that does not (too long, a
    kind this surface cannot take) says so and links to the web card instead."""
    header = _header(card)
    top = _top(card, state)
    if not card.is_pending or top.voted:
        return card_json(header, top.elements, card.title), True
    body = top.elements + _context(card)
    controls = _controls(card, short_id, state, web_link)
    full = card_json(header, body + controls, card.title)
    if capabilities.can_render(card) and _fits(full):
        return full, True
    cut = [
        *top.elements,
        line(_("The content is too long to show here: open it on the web to read it and answer.")),
        _link_button(_("Open the card on the web"), web_link),
    ]
    return card_json(header, cut, card.title), False


class _Top:
    def __init__(self, elements: list[dict[str, Any]], voted: bool) -> None:
        self.elements = elements
        self.voted = voted


def _top(card: Card, state: dict[str, Any]) -> _Top:
    """Risk, approval policy, and the outcome (or the viewer's vote) when there is one."""
    elements: list[dict[str, Any]] = []
    risk = risk_text(card)
    if risk:
        elements.append(line(risk))
    elements += [line(text) for text in policy_lines(card)]
    if not card.is_pending:
        elements.append(line(outcome_text(card) or ""))
        if card.action:
            elements.append(line(_fingerprint(card.action), text_color="grey"))
        return _Top(elements, False)
    voted = voted_text(card, str(state.get("viewer", ""))) if state.get("viewer") else None
    if voted:
        elements.append(line(voted))
        return _Top(elements, True)
    return _Top(elements, False)


def _context(card: Card) -> list[dict[str, Any]]:
    elements: list[dict[str, Any]] = []
    for title, value in ((_("Why you are needed"), card.why), (_("Impact"), card.impact)):
        if value:
            elements += [heading(title), line(value)]
    if card.action:
        elements += _action_lines(card.action)
    if card.content:
        elements += [heading(_("What to review")), line(card.content)]
    if card.content_url:
        elements.append(line(card.content_url))
    if card.expires_at:
        elements.append(line(_("Answer before %(when)s.", when=when(card.expires_at))))
    if card.details:
        pairs = "\n".join(f"{key}: {value}" for key, value in card.details.items())
        elements.append(
            {
                "tag": "collapsible_panel",
                "expanded": False,
                "header": {"title": plain(_("Details"))},
                "elements": [line(pairs)],
            }
        )
    return elements


def _action_lines(action: ActionView) -> list[dict[str, Any]]:
    """The exact action, every field as the agent sent it, as plain text."""
    elements = [heading(_("Exact action")), line(action.kind)]
    for field in action.fields:
        editable = f" ({_('editable')})" if field.editable else ""
        elements += [line(f"{field.name}{editable}:", text_color="grey"), line(field.text)]
    elements.append(line(_fingerprint(action), text_color="grey"))
    return elements


def _fingerprint(action: ActionView) -> str:
    shown = _("Fingerprint %(short)s", short=action.fingerprint)
    if action.edited_from_fingerprint:
        shown += " · " + _("edited from %(short)s", short=action.edited_from_fingerprint)
    return shown


# --- controls -----------------------------------------------------------------------------


def _controls(
    card: Card, short_id: str, state: dict[str, Any], web_link: str
) -> list[dict[str, Any]]:
    """The controls for the card's current state. An action whose editable field is too
    long for a form field is approved as shown here, or edited on the web."""
    if state.get("confirm") is not None:
        return _confirming(card, short_id, int(state["confirm"]))
    if card.takes_text:
        return [_text_form(card, short_id)]
    if card.multiple:
        return [_choices_form(card, short_id)]
    editable = card.action.editable if card.action else ()
    if editable:
        if any(len(field.text) > MAX_INPUT_CHARS for field in editable):
            return [
                *_buttons(card, short_id),
                _link_button(_("Edit and approve on the web"), web_link),
            ]
        return [_options_form(card, short_id, with_comment=False)]
    if card.type.value == "review":
        return [_options_form(card, short_id, with_comment=True)]
    return _buttons(card, short_id)


def _buttons(card: Card, short_id: str) -> list[dict[str, Any]]:
    return [
        _button(_option_label(card, i), short_id, CardAction.PICK, i, card.options[i].style)
        for i in range(len(card.options))
    ]


def _button(
    label: str,
    short_id: str,
    action: CardAction,
    index: int | None = None,
    style: str | None = None,
    *,
    submit: bool = False,
) -> dict[str, Any]:
    button: dict[str, Any] = {
        "tag": "button",
        "text": plain(label),
        "type": {"primary": "primary", "danger": "danger"}.get(style or "", "default"),
        "behaviors": [{"type": "callback", "value": card_value(short_id, action, index)}],
    }
    if submit:  # a button of a form: its press carries the form's fields
        button["form_action_type"] = "submit"
        button["name"] = f"{action}{'' if index is None else index}"
    return button


def _link_button(label: str, url: str) -> dict[str, Any]:
    return {
        "tag": "button",
        "text": plain(label),
        "type": "default",
        "behaviors": [{"type": "open_url", "default_url": url}],
    }


def _confirming(card: Card, short_id: str, index: int) -> list[dict[str, Any]]:
    return [
        line(_("High risk: tap again to confirm.")),
        _button(
            _("✅ Yes: %(label)s", label=card.options[index].label),
            short_id,
            CardAction.CONFIRM,
            index,
            "danger",
        ),
        _button(_("↩️ Cancel"), short_id, CardAction.CANCEL),
    ]


def _form(name: str, elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tag": "form", "name": name, "elements": elements}


def _text_form(card: Card, short_id: str) -> dict[str, Any]:
    spec = card.input
    field: dict[str, Any] = {
        "tag": "input",
        "name": TEXT_FIELD,
        "input_type": "password" if spec and spec.sensitive else "multiline_text",
        "max_length": min(MAX_INPUT_CHARS, (spec.max_length if spec else None) or MAX_INPUT_CHARS),
        "label": plain(_("Your answer")),
    }
    if spec and spec.placeholder:
        field["placeholder"] = plain(spec.placeholder)
    submit = _button(_("Send"), short_id, CardAction.SUBMIT, style="primary", submit=True)
    return _form("answer", [field, submit])


def _choices_form(card: Card, short_id: str) -> dict[str, Any]:
    select = {
        "tag": "multi_select_static",
        "name": CHOICES_FIELD,
        "placeholder": plain(_("Choose")),
        "options": [
            {"text": plain(option.label), "value": str(i)} for i, option in enumerate(card.options)
        ],
    }
    submit = _button(_("Submit"), short_id, CardAction.SUBMIT, style="primary", submit=True)
    return _form("answer", [line(_("Choose the options, then Submit.")), select, submit])


def _options_form(card: Card, short_id: str, *, with_comment: bool) -> dict[str, Any]:
    """Option buttons inside a form: with a comment field (a review) or the action's
    editable fields, which each press sends along."""
    fields: list[dict[str, Any]] = []
    if with_comment:
        fields.append(
            {
                "tag": "input",
                "name": COMMENT_FIELD,
                "input_type": "multiline_text",
                "max_length": MAX_INPUT_CHARS,
                "label": plain(_("Comment (needed to request changes)")),
            }
        )
    elif card.action is not None:
        for position, field in enumerate(card.action.fields):
            if field.editable:
                fields.append(
                    {
                        "tag": "input",
                        "name": edit_field_name(position),
                        "input_type": "multiline_text" if field.multiline else "text",
                        "default_value": field.text,
                        "max_length": MAX_INPUT_CHARS,
                        "label": plain(field.name),
                    }
                )
    buttons = [
        _button(
            _option_label(card, i),
            short_id,
            CardAction.PICK,
            i,
            card.options[i].style,
            submit=True,
        )
        for i in range(len(card.options))
    ]
    return _form("answer", [*fields, *buttons])


def edit_field_name(position: int) -> str:
    """A form field's name for the action's field at ``position`` (field names are the
    agent's, and a form's names must be plain)."""
    return f"field{position}"


def _option_label(card: Card, index: int) -> str:
    option = card.options[index]
    if option.style == "primary" or option.recommended:
        return "✅ " + option.label
    if option.style == "danger":
        return "✖️ " + option.label
    return option.label


def _fits(card: dict[str, Any]) -> bool:
    return len(json.dumps(card, ensure_ascii=False).encode()) <= MAX_CARD_BYTES


# --- other messages -----------------------------------------------------------------------


def notice_message(notice: Notice, task_url: str) -> dict[str, Any]:
    agent = notice.agent_name or _("An agent")
    failed = _("The task “%(title)s” by %(agent)s failed.", title=notice.task_title, agent=agent)
    elements = [line(failed)]
    if notice.error:
        elements.append(line(_("Reason: %(error)s", error=notice.error)))
    elements.append(_link_button(_("Open the task"), task_url))
    header = {"title": plain("✖ " + notice.task_title), "template": "red"}
    return card_json(header, elements, failed)


def text_message(text: str) -> dict[str, Any]:
    """A card holding only ``text``: unlike a text message, nothing in it can mention
    anyone, whatever an agent wrote into it."""
    return {
        "schema": "2.0",
        "config": {"summary": {"content": text[:100]}},
        "body": {"elements": [line(text)]},
    }
